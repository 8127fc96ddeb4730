// One stack command at a time per stack dir (up, down, stopping or starting a builder's bridge).
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Layout } from './layout.js';

/** One stack command at a time per stack dir; a second one waits (up to 5 min) for the first. */
export async function acquireLock(l: Layout): Promise<() => void> {
  fs.mkdirSync(l.root, { recursive: true });
  const file = `${l.root}/stack.lock`;
  const deadline = Date.now() + 300_000;
  let told = false;
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch {
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(file, 'utf8'));
      } catch {
        continue; // released meanwhile
      }
      let alive = false;
      try {
        process.kill(holder, 0);
        alive = holder !== process.pid;
      } catch {
        /* dead holder */
      }
      if (!alive) {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another stack command (pid ${holder}) holds ${file}`);
      if (!told) console.log(`waiting for another stack command (pid ${holder}) to finish...`);
      told = true;
      await sleep(250);
    }
  }
}
