// The bound of a prebuild pass (workers/prebuilds/pass-pool.ts): every index once, never more
// than the limit in flight, and a pass over fewer repositories than the limit.
import test from 'ava';
import { eachBounded, PASS_CONCURRENCY } from '../../../../workers/prebuilds/pass-pool.js';

async function run(count: number, limit?: number): Promise<{ seen: number[]; most: number }> {
  const seen: number[] = [];
  let inFlight = 0;
  let most = 0;
  await eachBounded(
    count,
    async (index) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // Each read settles a few turns later, out of order.
      for (let turn = 0; turn <= (index * 7) % 5; turn += 1) await Promise.resolve();
      seen.push(index);
      inFlight -= 1;
    },
    limit,
  );
  return { seen, most };
}

test('a pass over 2,000 repositories reads each once, at most PASS_CONCURRENCY at a time', async (t) => {
  const { seen, most } = await run(2000);
  t.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 2000 }, (_, i) => i),
  );
  t.is(most, PASS_CONCURRENCY);
});

test('fewer repositories than the limit all run at once; a pass of none ends at once', async (t) => {
  const few = await run(3, 16);
  t.deepEqual(
    [...few.seen].sort((a, b) => a - b),
    [0, 1, 2],
  );
  t.is(few.most, 3);
  t.deepEqual(await run(0), { seen: [], most: 0 });
});
