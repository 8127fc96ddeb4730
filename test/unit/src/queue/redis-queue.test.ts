// The queue's Lua scripts against a real redis-server of this file's own: the same order as
// embedded mode, keys that Redis Cluster accepts (one hash tag, all named in KEYS), wake-ups by
// message, the reap of a stopped replica's builds, and a cost that does not grow with the queue.
import test from 'ava';
import { createRedisQueue } from '../../../../src/queue/redis-queue.js';
import type { QueueStore } from '../../../../src/queue/types.js';
import type { RedisClient, RedisConnection } from '../../../../src/redis/connection.js';
import {
  BUILD_QUEUE_CHANNEL,
  QUEUE_KEYS,
  buildAliveKey,
  replicaAliveKey,
} from '../../../../src/redis/keys.js';
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
    const { dropped } = await reaper.reap(Date.now(), 30_000);
    t.deepEqual(
      dropped.map((e) => e.id),
      [deadHeld.id],
    );
    t.is((await alive.take('alive', 1)).entry?.id, aliveHeld.id);
  },
);

test.serial(
  'a running build whose lease and replica are gone stops counting toward its quota after its grace',
  async (t) => {
    const store = await fresh();
    await store.enqueue(queueEntry('q', 'api', { maxRunning: 1 }));
    await (await fresh('gone')).started('bld-lost', 'q', 0);
    t.is((await store.take('a', 1)).entry, undefined);
    await store.reap(10_000, 30_000);
    t.is((await store.admission('q')).tenantRunning, 1, 'kept within its grace');
    await store.reap(40_000, 30_000);
    t.is((await store.admission('q')).tenantRunning, 0);
    t.not((await store.take('a', 2)).entry, undefined);
  },
);

test.serial(
  'a build any replica may run, taken by a replica that died, is reaped as lost and waits again once',
  async (t) => {
    const dead = await fresh('dead');
    const reaper = await fresh('reaper');
    await reaper.heartbeat();
    const portable = queueEntry('t');
    const { request: _, ...own } = queueEntry('t', 'api', { owner: 'dead' });
    await dead.enqueue(portable);
    await dead.enqueue(own);
    t.is((await dead.take('dead', 0)).entry?.id, portable.id);
    t.is((await dead.take('dead', 0)).entry?.id, own.id);
    t.is((await reaper.admission('t')).tenantRunning, 2);
    // Neither lease nor heartbeat of `dead` exists: both ran there and it stopped beating.
    const { lost } = await reaper.reap(40_000, 30_000);
    t.deepEqual(
      lost,
      [{ id: portable.id, replica: 'dead', beating: false }],
      'only the one any replica may run',
    );
    t.is((await reaper.admission('t')).tenantRunning, 1, 'the other no longer counted');
    t.deepEqual(await reaper.again('dead', [portable.id]), [portable.id]);
    t.deepEqual(await reaper.again('dead', [portable.id]), [], 'a repeat puts nothing back');
    t.is((await reaper.admission('t')).tenantWaiting, 1);
    const taken = await reaper.take('reaper', 50_000);
    t.deepEqual(taken.entry, portable, 'the same entry, under its id');
    t.deepEqual(await reaper.again('dead', [portable.id]), [], 'running on reaper now');
    await dead.ended(portable.id);
    t.is((await reaper.admission('t')).tenantRunning, 1, 'the dead replica ends nothing of it');
    await reaper.ended(portable.id);
    t.is((await reaper.admission('t')).tenantRunning, 0);
  },
);

test.serial(
  'a running build without lease whose replica beats is told apart, and still counted',
  async (t) => {
    const live = await fresh('live');
    const reaper = await fresh('reaper');
    await live.heartbeat();
    await live.enqueue(queueEntry('t'));
    const { entry } = await live.take('live', 0);
    t.not(entry, undefined);
    t.is(await client().exists(buildAliveKey(entry?.id ?? '')), 0);
    t.deepEqual((await reaper.reap(40_000, 30_000)).lost, [
      { id: entry?.id, replica: 'live', beating: true },
    ]);
    t.is((await reaper.admission('t')).tenantRunning, 1, 'still counted: it may run there');
    t.deepEqual(
      (await live.reap(40_000, 30_000)).lost,
      [{ id: entry?.id, replica: 'live', beating: true }],
      'its own replica tells it so too',
    );
  },
);

test.serial('a build handed back by the replica that took it waits again, once', async (t) => {
  const a = await fresh('a');
  const b = await fresh('b');
  const entry = queueEntry('t');
  await a.enqueue(entry);
  t.is((await a.take('a', 0)).entry?.id, entry.id);
  await a.enqueue(entry);
  t.is((await b.take('b', 1)).entry, undefined, 'an enqueue of a running build changes nothing');
  await a.requeue(entry);
  await a.requeue(entry);
  t.is((await b.admission('t')).tenantWaiting, 1, 'a repeat changes nothing');
  t.is((await b.take('b', 1)).entry?.id, entry.id);
  await b.requeue(entry);
  await a.requeue(entry);
  t.is((await a.admission('t')).tenantWaiting, 1, 'handed back by b; a runs it no more');
});

test.serial('a build started at once any replica may run is kept while it runs', async (t) => {
  const dead = await fresh('dead');
  const reaper = await fresh('reaper');
  const entry = queueEntry('t');
  await dead.started(entry.id, 't', 0, entry);
  const { request: _, ...own } = queueEntry('t', 'api', { owner: 'dead' });
  await dead.started(own.id, 't', 0, own);
  t.deepEqual((await reaper.reap(40_000, 30_000)).lost, [{ id: entry.id, replica: 'dead', beating: false }]);
  t.deepEqual(await reaper.again('dead', [entry.id]), [entry.id]);
  t.deepEqual((await reaper.take('reaper', 1)).entry, entry);
});

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
