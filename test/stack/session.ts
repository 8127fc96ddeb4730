// Whether a run of test/run.sh started the stack it uses, so that it stops only what it started:
// `up --session FILE` writes `owned` when no process of the stack was running before, `shared`
// otherwise (a quick start's stack, another shell's); `down --session FILE` stops the stack only
// when FILE says `owned`. CI on a clean machine owns its stack, so it still ends with it down.
import fs from 'node:fs';
import type { Layout } from './layout.js';
import { markedPids } from './proc.js';

export type Ownership = 'owned' | 'shared';

/** `shared` when any process of the stack in `l` runs now. */
export function currentOwnership(l: Layout): Ownership {
  return fs.existsSync(l.root) && markedPids(l).length > 0 ? 'shared' : 'owned';
}

export function writeSession(file: string, ownership: Ownership): void {
  fs.writeFileSync(file, `${ownership}\n`);
}

/** What the session file says; undefined when it is missing or unreadable (up never got that far). */
export function readSession(file: string): Ownership | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text === 'owned' || text === 'shared' ? text : undefined;
  } catch {
    return undefined;
  }
}
