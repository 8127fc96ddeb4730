/**
 * The repositories of one prebuild pass (reconcile, refresh) are read PASS_CONCURRENCY at a time:
 * enough requests in flight that a forge's latency, not their count, sets the pace, and few enough
 * that none runs past its deadline (a read that times out waits for the next pass). The git
 * processes among them (ssh) have their own, smaller bound (workers/git/ls-remote.ts).
 */

/** Repositories of one pass read at once (over http(s), each one `GET info/refs` in process). */
export const PASS_CONCURRENCY = 64;

/**
 * Runs `each` on every index below `count`, at most `limit` at a time, each once, in order of
 * index; resolves once every one has settled. `each` handles its own failures (a rejection ends
 * the pass with it). O(count) calls, at most `limit` in flight.
 */
export async function eachBounded(
  count: number,
  each: (index: number) => Promise<void>,
  limit = PASS_CONCURRENCY,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next;
      next += 1;
      await each(index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(0, Math.min(limit, count)) }, worker));
}
