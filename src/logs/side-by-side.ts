/**
 * Steps that run side by side and share one command log: each writes to a writer of its own that
 * holds its output, and once every step has settled the held output reaches the log step after
 * step, in the order given, so the log reads as if they had run one after the other. Resolves
 * with their results in that order, or rejects with the first failure in that order (after every
 * step has ended, so nothing writes to the log later).
 */
import type { CommandLogWriter } from './types.js';

/** A writer holding what it is given until release() passes it on to `log` (secrets masked there). */
function heldWriter(log: CommandLogWriter): { writer: CommandLogWriter; release: () => void } {
  const held: (string | Uint8Array)[] = [];
  return {
    writer: {
      id: log.id,
      write: (chunk) => void held.push(chunk),
      addSecrets: (secrets) => log.addSecrets(secrets),
      // The log's owner closes it.
      close: () => Promise.resolve(),
    },
    release: () => {
      for (const chunk of held.splice(0)) log.write(chunk);
    },
  };
}

export type Step<T> = (log: CommandLogWriter) => Promise<T>;

export async function sideBySide<T extends readonly unknown[]>(
  log: CommandLogWriter,
  steps: { readonly [K in keyof T]: Step<T[K]> },
): Promise<T> {
  const started = steps.map((step: Step<unknown>) => {
    const held = heldWriter(log);
    return { held, result: step(held.writer) };
  });
  const settled = await Promise.allSettled(started.map((s) => s.result));
  for (const { held } of started) held.release();
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
