// Redis mode's writes are safe to repeat: a real redis-server behind a proxy that loses the answer
// of one command after it landed (test/helpers/cutting-proxy.ts), so that the client reconnects and
// sends it again, as when a failover breaks the connection at the worst moment. The queue's take
// answers the build it took (none is stranded as taken and never run), an adoption answers yes, a
// waiters change counts once, an Idempotency-Key reservation stays its request's; an enqueue or a
// start repeated later changes nothing.
import test from 'ava';
import { adoptEntry, startEntry, updateEntry } from '../../src/builds/redis-build-writes.js';
import { bindKey, releaseKey, reserveKey } from '../../src/builds/redis-idempotency-keys.js';
import type { BuildEntry } from '../../src/builds/records.js';
import type { QueueEntry } from '../../src/queue/fair-order.js';
import { createRedisQueue } from '../../src/queue/redis-queue.js';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { buildAliveKey, buildKey } from '../../src/redis/keys.js';
import { redisUrl } from '../stack/redis-server.js';
import { cuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { eventually } from '../helpers/eventually.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { silentLogger } from '../helpers/silent-logger.js';

let redis: RedisProcess;
let proxy: CuttingProxy;
let connection: RedisConnection;

test.before(async () => {
  redis = await startRedis();
  proxy = await cuttingProxy(redis.port);
  connection = createRedisConnection(
    { kind: 'server', url: redisUrl(proxy.port, redis.password) },
    silentLogger(),
  );
  await eventually(() => connection.client.status === 'ready', { what: 'the connection' });
});
test.after.always(async () => {
  await connection.close();
  await proxy.close();
  await redis.dispose();
});

const entry = (id: string): QueueEntry => ({
  id,
  class: 'api',
  tenant: 'team',
  enqueuedAtMs: Date.now(),
  owner: 'r0',
  request: { repository: 'https://git.example/app.git' },
  requestId: `req-${id}`,
});

/** The record as stored (read without settling it). */
const stored = async (id: string): Promise<BuildEntry | undefined> => {
  const text = await connection.client.get(buildKey(id));
  return text === null ? undefined : (JSON.parse(text) as BuildEntry);
};

const record = (id: string, phase: 'queued' | 'cloning') => ({
  id,
  requestId: `req-${id}`,
  repository: 'https://git.example/app.git',
  image: 'registry.example/app',
  startedAtMs: Date.now(),
  phase,
  waiters: 1,
  replica: 'r0',
});

test.serial('a take whose answer was lost answers the same build; the next waits still', async (t) => {
  t.timeout(30_000);
  const queue = createRedisQueue(connection, 'taker-1', silentLogger());
  await queue.enqueue(entry('warm'));
  await queue.take('taker-1', Date.now());
  await queue.enqueue(entry('first'));
  await queue.enqueue(entry('second'));
  const lost = proxy.loseAnswerTo('taker-1');
  const taken = await queue.take('taker-1', Date.now());
  await lost;
  t.is(taken.entry?.id, 'first');
  t.is(taken.depths.api, 1, 'one build still waits');
  const places = await queue.places(['first', 'second']);
  t.deepEqual(
    places.builds.map((b) => b.id),
    ['second'],
  );
  t.is((await queue.take('taker-1', Date.now())).entry?.id, 'second');
});

test.serial('an enqueue repeated once its build was taken changes nothing', async (t) => {
  const queue = createRedisQueue(connection, 'r2', silentLogger());
  await queue.enqueue(entry('again'));
  t.is((await queue.take('r2', Date.now())).entry?.id, 'again');
  const depths = await queue.enqueue(entry('again'));
  t.is(depths.api, 0);
  t.is((await queue.take('r2', Date.now())).entry, undefined);
});

test.serial('an adoption whose answer was lost answers yes, leased to its replica', async (t) => {
  t.timeout(30_000);
  await startEntry(connection, record('bld-warm', 'queued'), 0);
  await adoptEntry(connection, 'bld-warm', 'r1', 15_000);
  await startEntry(connection, record('bld-adopted', 'queued'), 0);
  const lost = proxy.loseAnswerTo('bld-adopted');
  t.true(await adoptEntry(connection, 'bld-adopted', 'r1', 15_000));
  await lost;
  t.is((await stored('bld-adopted'))?.phase, 'cloning');
  t.is(await connection.client.get(buildAliveKey('bld-adopted')), 'r1');
  t.false(await adoptEntry(connection, 'bld-adopted', 'r2', 15_000), 'another replica is told no');
});

test.serial('a waiters change whose answer was lost counts once', async (t) => {
  t.timeout(30_000);
  await startEntry(connection, record('bld-followed', 'cloning'), 15_000);
  await updateEntry(connection, 'bld-followed', {}, 1, 60_000);
  const lost = proxy.loseAnswerTo('bld-followed');
  await updateEntry(connection, 'bld-followed', {}, 1, 60_000);
  await lost;
  t.is((await stored('bld-followed'))?.waiters, 3);
});

test.serial('an Idempotency-Key reservation whose answer was lost is reserved, not taken', async (t) => {
  t.timeout(30_000);
  const kept = async (): Promise<boolean> => true;
  await reserveKey(connection, 'warm-key', 'digest', kept);
  const lost = proxy.loseAnswerTo('digest-of-the-body');
  t.like(await reserveKey(connection, 'the-key', 'digest-of-the-body', kept), { kind: 'reserved' });
  await lost;
  const other = await reserveKey(connection, 'the-key', 'digest-of-the-body', kept);
  t.deepEqual(other, { kind: 'taken', sameBody: true }, 'another request finds it reserved');
});

/** The token of a reservation this test made (it must be one). */
async function reserved(key: string): Promise<string> {
  const held = await reserveKey(connection, key, 'd', async () => true);
  if (held.kind !== 'reserved') throw new Error(`${key} was not reserved`);
  return held.token;
}

test.serial('a release frees a key no build was bound to, and keeps a bound one', async (t) => {
  const kept = async (): Promise<boolean> => true;
  await releaseKey(connection, 'unbound-key', await reserved('unbound-key'));
  t.like(await reserveKey(connection, 'unbound-key', 'd', kept), { kind: 'reserved' });
  const bound = await reserved('bound-key');
  await bindKey(connection, 'bound-key', 'bld-bound');
  await releaseKey(connection, 'bound-key', bound);
  t.deepEqual(await reserveKey(connection, 'bound-key', 'd', kept), {
    kind: 'taken',
    sameBody: true,
    buildId: 'bld-bound',
  });
});

test.serial("a late release of a reservation that expired never frees the next request's", async (t) => {
  const kept = async (): Promise<boolean> => true;
  const first = await reserved('late-key');
  // The first reservation ended (expired, or freed once); the caller's retry holds the key now.
  await releaseKey(connection, 'late-key', first);
  const second = await reserved('late-key');
  await releaseKey(connection, 'late-key', first);
  t.deepEqual(
    await reserveKey(connection, 'late-key', 'd', kept),
    { kind: 'taken', sameBody: true },
    'the retry still holds the key',
  );
  await releaseKey(connection, 'late-key', second);
  t.like(await reserveKey(connection, 'late-key', 'd', kept), { kind: 'reserved' });
});

test.serial('a start repeated after the build moved on keeps the record', async (t) => {
  const first = record('bld-started', 'queued');
  await startEntry(connection, first, 0);
  t.true(await adoptEntry(connection, 'bld-started', 'r1', 15_000));
  await startEntry(connection, first, 0);
  t.is((await stored('bld-started'))?.phase, 'cloning');
});
