// The one lock of Redis mode (src/redis/lock.ts: the retention run lock, the prebuild schedules'
// lock) against a real redis-server and a real Redis Cluster of the test's own (each test once per
// kind): two lock values on two connections stand for two replicas of one key. One holds at a
// time; only the holder renews or lets go; a holder that stops renewing (its process died) loses
// the key once its lease runs out.
import test, { type ExecutionContext } from 'ava';
import { RedisLock } from '../../src/redis/lock.js';
import { eventually } from '../helpers/eventually.js';
import {
  readyConnection,
  REDIS_KINDS,
  useRedisTargets,
  type RedisKind,
} from '../helpers/redis-test-server.js';

const redis = useRedisTargets();

let keys = 0;
const freshKey = (): string => `ibs:test:lock:${process.pid}-${(keys += 1)}`;

async function replicas(
  t: ExecutionContext,
  kind: RedisKind,
  leaseMs: number,
): Promise<[RedisLock, RedisLock]> {
  const key = freshKey();
  const one = await readyConnection(redis(kind));
  const two = await readyConnection(redis(kind));
  t.teardown(async () => {
    await one.close();
    await two.close();
  });
  return [new RedisLock(one, key, leaseMs), new RedisLock(two, key, leaseMs)];
}

for (const kind of REDIS_KINDS) {
  test(`${kind}: one holder at a time: the other is refused until the holder lets go`, async (t) => {
    const [a, b] = await replicas(t, kind, 60_000);
    t.true(await a.hold());
    t.false(await b.hold());
    t.true(await a.hold(), 'the holder renews');
    await b.release();
    t.false(await b.hold(), 'a release by one that does not hold it lets nothing go');
    await a.release();
    t.true(await b.hold());
    t.false(await a.hold());
  });

  test(`${kind}: a holder that stops renewing loses the lock once its lease runs out`, async (t) => {
    const [a, b] = await replicas(t, kind, 3_000);
    t.true(await a.hold());
    t.false(await b.hold());
    await eventually(() => b.hold(), { what: 'the lease to run out' });
    t.false(await a.hold(), 'the old holder does not take it back');
  });

  test(`${kind}: holding while work runs: others are refused during it, and it is let go after`, async (t) => {
    const [a, b] = await replicas(t, kind, 3_000);
    let refusedDuring: boolean | undefined;
    const ran = await a.holdWhile(async () => {
      refusedDuring = !(await b.hold());
    });
    t.true(ran);
    t.true(refusedDuring);
    t.true(await b.hold(), 'let go after the work');
    t.false(await a.holdWhile(() => Promise.resolve()), 'not run while another holds it');
  });
}
