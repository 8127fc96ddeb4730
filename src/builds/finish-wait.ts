/**
 * The long poll of GET /builds/{id}?wait, for either registry: the record once the build has
 * finished, or as it stands after `ms`, woken by the registry's own signal of a finish (an event
 * in memory, a subscription in Redis mode), never by reading in a loop.
 */
import type { SubscriptionHub } from '../redis/subscriptions.js';
import type { BuildRecord } from './types.js';

/** Subscribes `wake` to the finish of one build; resolves with the unsubscribe. */
export type FinishWatch = (wake: () => void) => Promise<() => void>;

export async function finishedWithin(
  get: (id: string) => Promise<BuildRecord | undefined>,
  id: string,
  ms: number,
  signal: AbortSignal | undefined,
  watch: FinishWatch,
  /** Re-read at least this often (Redis mode: a replica that died publishes nothing). */
  recheckMs = ms,
): Promise<BuildRecord | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    let wake = (): void => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const unwatch = await watch(wake);
    try {
      const record = await get(id);
      const left = deadline - Date.now();
      if (record === undefined || record.phase === 'finished' || left <= 0 || signal?.aborted === true)
        return record;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => wake();
      signal?.addEventListener('abort', onAbort, { once: true });
      await Promise.race([
        woken,
        new Promise<void>((r) => (timer = setTimeout(r, Math.min(left, recheckMs)))),
      ]);
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    } finally {
      unwatch();
    }
  }
}

/** The long polls of one process, by build id: woken when that build finishes here. */
export class FinishWaiters {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** The FinishWatch of build `id`. */
  watch(id: string): FinishWatch {
    return async (wake) => {
      const set = this.#waiting.get(id) ?? new Set<() => void>();
      this.#waiting.set(id, set.add(wake));
      return () => {
        set.delete(wake);
        if (set.size === 0 && this.#waiting.get(id) === set) this.#waiting.delete(id);
      };
    };
  }

  finished(id: string): void {
    for (const wake of this.#waiting.get(id) ?? []) wake();
    this.#waiting.delete(id);
  }
}

/** The FinishWatch of a build whose end is published on `channel` (Redis mode). */
export function channelWatch(hub: SubscriptionHub, channel: string): FinishWatch {
  return async (wake) => {
    const sub = await hub.subscribe(channel);
    const stopWaiting = new AbortController();
    void sub.changeSince(sub.version(), stopWaiting.signal).then(wake);
    return () => {
      stopWaiting.abort();
      sub.release();
    };
  };
}
