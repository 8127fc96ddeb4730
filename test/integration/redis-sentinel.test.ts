// Redis mode through Redis Sentinel (redis.sentinels, redis.sentinelName): a real primary, a replica
// and three Sentinels of Debian's redis-server. Two log stores and a lock stand for two replicas;
// after SENTINEL FAILOVER promotes the replica, what was written before is still read, and new
// logs and the lock work again once the client has followed the Sentinels to the new primary.
import test, { type ExecutionContext } from 'ava';
import { createRedisLogStore } from '../../src/logs/redis-store.js';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { RedisLock } from '../../src/redis/lock.js';
import { eventually } from '../helpers/eventually.js';
import { startRedisSentinels, type RedisSentinelProcess } from '../helpers/redis-sentinel-process.js';
import { silentLogger } from '../helpers/silent-logger.js';

let sentinels: RedisSentinelProcess | undefined;
test.before(async () => {
  sentinels = await startRedisSentinels();
});
test.after.always(async () => {
  await sentinels?.dispose();
});

async function replica(
  t: ExecutionContext,
): Promise<{ connection: RedisConnection; store: ReturnType<typeof createRedisLogStore> }> {
  if (sentinels === undefined) throw new Error('the Sentinels have not started');
  const connection = createRedisConnection(sentinels.target, silentLogger());
  await eventually(() => connection.client.status === 'ready', {
    what: 'the connection through the Sentinels',
  });
  const store = createRedisLogStore({
    config: { logs: { retention: 100 }, gitCredentials: [], registryAuth: { auths: {} }, redis: {} },
    connection,
    logger: silentLogger(),
  });
  t.teardown(async () => {
    await store.close();
    await connection.close();
  });
  return { connection, store };
}

test('logs and the lock keep working through a failover; what was written before is read after', async (t) => {
  const { password, failover, primaryPort } = sentinels as RedisSentinelProcess;
  const [a, b] = [await replica(t), await replica(t)];
  const before = await a.store.open('img');
  before.write('written before the failover\n');
  await before.close();
  t.is((await b.store.read(before.id)).text, 'written before the failover\n');
  const lock = new RedisLock(a.connection, 'ibs:{test}:sentinel-lock', 5000);
  t.true(await lock.hold());

  const oldPrimary = await primaryPort();
  await failover();
  t.not(await primaryPort(), oldPrimary, 'the replica is the primary now');

  // The clients follow the Sentinels: the first commands may fail (503) while they reconnect.
  const after = await eventually(
    async () => {
      const log = await a.store.open('img');
      log.write('written after the failover\n');
      await log.close();
      return log;
    },
    { timeout: 30_000, interval: 200, what: 'a log to be written on the new primary' },
  );
  t.is((await b.store.read(after.id)).text, 'written after the failover\n');
  t.deepEqual(await b.store.read(before.id), { text: 'written before the failover\n', complete: true });
  t.true(
    await eventually(() => lock.hold(), {
      timeout: 10_000,
      interval: 200,
      what: 'the lock to be held again',
    }),
  );
  t.false(JSON.stringify(await b.store.read(after.id)).includes(password));
});
