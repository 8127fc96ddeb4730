/**
 * The repositories of one prebuild pass (reconcile, refresh) are read a few at a time: a pass over
 * thousands of configurations starts at most PASS_CONCURRENCY reads (`git ls-remote`, the
 * registry's tags) at once, so that a storm neither floods the machine with git processes nor
 * runs each read past its deadline (a read that times out waits for the next pass).
 */

/** Repositories of one pass read at once. */
export const PASS_CONCURRENCY = 16;

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
