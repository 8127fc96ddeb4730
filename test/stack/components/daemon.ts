// The common life cycle of a daemon component: reuse it when its recorded process is alive and
// healthy, otherwise stop what is left of it, start it detached and wait until it is healthy.
import type { Layout } from '../layout.js';
import { type DetachedSpec, livePid, logFile, startDetached, stopComponent, tail, waitFor } from '../proc.js';
import type { Outcome } from './types.js';

export interface DaemonDef {
  name: string;
  healthy(): Promise<boolean>;
  /** Called only when a (re)start is needed; may claim ports and write config files. */
  prepare(): Promise<DetachedSpec>;
  timeoutMs?: number;
}

export async function ensureDaemon(l: Layout, def: DaemonDef): Promise<Outcome> {
  if (livePid(l, def.name) !== undefined && (await def.healthy().catch(() => false))) return 'reused';
  await stopComponent(l, def.name);
  const spec = await def.prepare();
  const pid = startDetached(l, spec);
  try {
    await waitFor(def.name, def.healthy, { pid, timeoutMs: def.timeoutMs ?? 20_000 });
  } catch (err) {
    const log = tail(logFile(l, def.name));
    await stopComponent(l, def.name, 1000);
    throw new Error(`${(err as Error).message}\n--- tail of ${logFile(l, def.name)}:\n${log}`);
  }
  return 'started';
}

/** HTTP GET status of a URL (any status counts as "answering"), undefined if unreachable. */
export async function httpStatus(url: string, init: RequestInit = {}): Promise<number | undefined> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}
