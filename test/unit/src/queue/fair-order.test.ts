// The queue's order (docs/queue.md) as embedded mode keeps it (the same cases run against Redis in
// redis-queue.test.ts); the drain estimate of a full queue's 429.
import test from 'ava';
import { drainSeconds } from '../../../../src/queue/fair-order.js';
import { createMemoryQueue } from '../../../../src/queue/memory-queue.js';
import { orderCases } from '../../../helpers/queue-order-cases.js';

orderCases(test, 'embedded', async () => createMemoryQueue());

test('a full queue waits as long as the measured drain rate says, a default without data', (t) => {
  t.is(drainSeconds([], 10, 60), 60);
  const drained = [4000, 3000, 2000, 1000, 0];
  t.is(drainSeconds(drained, 10, 60), 10);
  t.is(drainSeconds(drained, 100_000, 60), 3600);
});
