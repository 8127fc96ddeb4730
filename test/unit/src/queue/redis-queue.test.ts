// The queue's Lua scripts against a real redis-server of this file's own: the same order as
// embedded mode, keys that Redis Cluster accepts (one hash tag, all named in KEYS), wake-ups by
// message, the reap of a stopped replica's builds, and a cost that does not grow with the queue.
import test from 'ava';
import { createRedisQueue } from '../../../../src/queue/redis-queue.js';
import type { QueueStore } from '../../../../src/queue/types.js';
import type { RedisClient, RedisConnection } from '../../../../src/redis/connection.js';
import { BUILD_QUEUE_CHANNEL, QUEUE_KEYS, replicaAliveKey } from '../../../../src/redis/keys.js';
import { eventually } from '../../../helpers/eventually.js';
import { orderCases, queueEntry, takeAll } from '../../../helpers/queue-order-cases.js';
import { readyConnection, useRedisServer } from '../../../helpers/redis-test-server.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

const redis = useRedisServer();
let connection: RedisConnection | undefined;
const stores: QueueStore[] = [];

/** A store on an emptied server (tests of this file run one at a time). */
async function fresh(replica = 'a'): Promise<QueueStore> {
  connection ??= await readyConnection(redis());
  const store = createRedisQueue(connection, replica, silentLogger());
  stores.push(store);
  return store;
}
const client = (): RedisClient => {
  if (connection === undefined) throw new Error('no connection yet');
  return connection.client;
};

test.beforeEach(async () => {
  connection ??= await readyConnection(redis());
  await connection.client.flushall();
});
test.after.always(async () => {
  for (const store of stores) store.close();
  await connection?.close();
});

orderCases(test.serial, 'Redis', () => fresh());

test.serial('every key of the queue carries one hash tag, and the scripts touch no other key', async (t) => {
  const store = await fresh();
  const { request: _, ...held } = queueEntry('t1', 'api', { owner: 'a', maxRunning: 3 });
  await store.enqueue(held);
  await store.enqueue(queueEntry('t2', 'refresh'));
  await store.started('bld-now', 't1', 1);
  await store.take('a', 2);
  await store.places([held.id]);
  const keys = await client().keys('*');
  t.true(keys.length > 5);
  // Beside them, a take's answer under its own token (kept for a repeat of the take).
  t.deepEqual(
    keys.filter((key) => !QUEUE_KEYS.includes(key) && !/^ibs:\{queue\}:take:[0-9a-f-]{36}$/.test(key)),
    [],
  );
  t.is(keys.filter((key) => key.startsWith('ibs:{queue}:take:')).length, 1, 'the one take');
  t.true(QUEUE_KEYS.every((key) => key.startsWith('ibs:{queue}:')));
});

test.serial('a replica learns of work by a message, not by reading the queue', async (t) => {
  const store = await fresh();
  let woken = 0;
  store.onChange(() => (woken += 1));
  await eventually(
    async () => ((await client().pubsub('NUMSUB', BUILD_QUEUE_CHANNEL)) as [string, number])[1] === 1,
    { interval: 20, what: 'the queue channel subscribed' },
  );
  const before = woken;
  await store.enqueue(queueEntry('w'));
  await eventually(async () => woken > before, { what: 'a wake-up for the enqueued build' });
  t.pass();
});

test.serial(
  'the reap drops the builds of a replica whose heartbeat expired, and keeps a live one',
  async (t) => {
    const reaper = await fresh('reaper');
    const alive = await fresh('alive');
    await alive.heartbeat();
    const { request: _a, ...aliveHeld } = queueEntry('t', 'api', { owner: 'alive' });
    const { request: _d, ...deadHeld } = queueEntry('t', 'api', { owner: 'dead' });
    await reaper.enqueue(aliveHeld);
    await reaper.enqueue(deadHeld);
    t.is(await client().exists(replicaAliveKey('dead')), 0);
    const dropped = await reaper.reap(Date.now(), 30_000);
    t.deepEqual(
      dropped.map((e) => e.id),
      [deadHeld.id],
    );
    t.is((await alive.take('alive', 1)).entry?.id, aliveHeld.id);
  },
);

test.serial(
  'a running build whose lease is gone stops counting toward its quota after its grace',
  async (t) => {
    const store = await fresh();
    await store.enqueue(queueEntry('q', 'api', { maxRunning: 1 }));
    await store.started('bld-lost', 'q', 0);
    t.is((await store.take('a', 1)).entry, undefined);
    await store.reap(10_000, 30_000);
    t.is((await store.admission('q')).tenantRunning, 1, 'kept within its grace');
    await store.reap(40_000, 30_000);
    t.is((await store.admission('q')).tenantRunning, 0);
    t.not((await store.take('a', 2)).entry, undefined);
  },
);

/** Bytes Redis received for one enqueue and one take, with `depth` builds waiting. */
async function bytesPerOperation(store: QueueStore, depth: number): Promise<number> {
  const stats = async (): Promise<number> =>
    Number(/total_net_input_bytes:(\d+)/.exec(await client().info('stats'))?.[1]);
  for (let i = 0; i < depth; i += 1) await store.enqueue(queueEntry(`tenant-${i % 50}`));
  const before = await stats();
  const rounds = 20;
  for (let i = 0; i < rounds; i += 1) {
    await store.enqueue(queueEntry(`tenant-${i % 50}`));
    await store.take('a', i);
  }
  return ((await stats()) - before) / rounds;
}

test.serial('what an operation sends Redis does not grow with the builds waiting', async (t) => {
  const shallow = await bytesPerOperation(await fresh(), 10);
  await client().flushall();
  const deep = await bytesPerOperation(await fresh(), 2000);
  t.true(Math.abs(deep - shallow) / shallow < 0.1, `${shallow} B at 10 waiting, ${deep} B at 2000`);
  t.is((await takeAll(await fresh())).length, 2000 + 20 - 20);
});
