// The Redis build registry against a real redis-server of the test's own: two registries on two
// connections stand for two replicas; one that stops renewing (its process died) loses its builds,
// one that still beats keeps them while it renews (it takes a lapsed lease again).
import { serviceError } from '../../src/errors/errors.js';
import { createRedisQueue } from '../../src/queue/redis-queue.js';
import test from 'ava';
import type { BuildFilter, BuildRegistry } from '../../src/builds/types.js';
import { createRedisBuildRegistry, type RedisBuildRegistry } from '../../src/builds/redis-registry.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { readyConnection, useRedisServer } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';
import { eventually } from '../helpers/eventually.js';
import { buildAliveKey, buildUnleasedKey, replicaAliveKey } from '../../src/redis/keys.js';

/** Every build a registry lists (one page of the largest size). */
const listed = async (registry: Pick<BuildRegistry, 'list'>, filter: BuildFilter = {}) =>
  (await registry.list(filter, { limit: 500 })).builds;

const redis = useRedisServer();

async function replica(
  t: { teardown: (fn: () => Promise<void> | void) => void },
  options: {
    history?: number;
    leaseMs?: number;
    server?: RedisProcess;
    now?: () => number;
    name?: string;
  } = {},
): Promise<{ registry: RedisBuildRegistry; connection: RedisConnection }> {
  const connection = await readyConnection(options.server ?? redis());
  const registry = createRedisBuildRegistry({
    connection,
    history: options.history ?? 10,
    historyDays: 30,
    logger: silentLogger(),
    replica: options.name ?? 'test-replica',
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  t.teardown(async () => {
    registry.close();
    await connection.close();
  });
  return { registry, connection };
}

const newBuild = (label: string) => ({
  requestId: `req-${label}`,
  repository: `https://git.example/${label}.git`,
  image: `registry.example/${label}`,
});

test('a build started on one replica is listed, updated and finished as seen from another', async (t) => {
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const a = await replica(t, { server, history: 2 });
  const b = await replica(t, { server, history: 2 });
  const id = await a.registry.start(newBuild('one'));
  await a.registry.update(id, { phase: 'building', commit: 'c0ffee', imageBuildLogId: 'img-x' });
  await b.registry.addWaiters(id, 2);
  const [running] = await listed(b.registry, { status: 'running' });
  t.like(running, {
    id,
    requestId: 'req-one',
    phase: 'building',
    commit: 'c0ffee',
    imageBuildLogId: 'img-x',
    waiters: 3,
  });
  await a.registry.finish(id, {
    status: 'success',
    durationSeconds: 4.2,
    image: 'registry.example/one:sha-c0ffee',
  });
  t.deepEqual(await listed(b.registry, { status: 'running' }), []);
  const [done] = await listed(b.registry, { status: 'success' });
  t.like(done, { id, phase: 'finished', status: 'success', durationSeconds: 4.2, elapsedSeconds: 4.2 });
  t.is(done?.image, 'registry.example/one:sha-c0ffee');

  // History holds across replicas: the newest 2 finished builds.
  for (const [r, label] of [
    [b, 'two'],
    [a, 'three'],
  ] as const) {
    const other = await r.registry.start(newBuild(label));
    await r.registry.finish(other, { status: 'failure', durationSeconds: 1, error: 'boom' });
  }
  const finished = await listed(a.registry);
  t.deepEqual(finished.map((r) => r.requestId).sort(), ['req-three', 'req-two']);
});

// A replica writes a queued build's record, then puts it in the queue: one that stops (or loses
// Redis) between the two, or takes it from the queue and stops before starting it, leaves a record
// that no replica would ever run. Once it is 30 s old and the queue holds it nowhere, the next read
// ends it as never started, telling that replica once (its events go out).
test('a queued record the queue holds nowhere ends as never started once 30 s old', async (t) => {
  const server = await startRedis();
  t.teardown(() => server.dispose());
  let later = 0;
  const writer = await replica(t, { server });
  const reader = await replica(t, { server, now: () => Date.now() + later });
  const told: string[] = [];
  reader.registry.onLost((record) => told.push(`${record.id} ${record.status ?? ''}`));
  const orphan = await writer.registry.start({ ...newBuild('orphan'), queued: true });
  const waiting = await writer.registry.start({ ...newBuild('waiting'), queued: true });
  const taken = await writer.registry.start({ ...newBuild('taken'), queued: true });
  const queue = createRedisQueue(writer.connection, 'test-replica', silentLogger());
  t.teardown(() => queue.close());
  await queue.enqueue({
    id: waiting,
    class: 'api',
    tenant: 'waiting',
    enqueuedAtMs: Date.now(),
    owner: 'test-replica',
    request: {},
    requestId: 'req-waiting',
  });
  await queue.started(taken, 'taken', Date.now());
  const phases = async (): Promise<string[]> =>
    Promise.all([orphan, waiting, taken].map(async (id) => (await reader.registry.get(id))?.phase ?? ''));
  t.deepEqual(await phases(), ['queued', 'queued', 'queued'], 'young: kept whatever the queue says');
  later = 31_000;
  t.deepEqual(await phases(), ['finished', 'queued', 'queued'], 'old: kept only while the queue holds it');
  const ended = await writer.registry.get(orphan);
  t.is(ended?.status, 'failure');
  t.deepEqual(ended?.answer, {
    status: 503,
    body: serviceError('BUILD_NOT_STARTED', {
      reason:
        'it left the queue without starting: its replica test-replica stopped or lost the shared store meanwhile',
    }).toBody(),
  });
  // The list ends one the same way; each is told once.
  await queue.ended(taken);
  t.deepEqual(
    (await listed(reader.registry)).filter((r) => r.phase !== 'finished').map((r) => r.id),
    [waiting],
  );
  t.deepEqual(told.sort(), [`${orphan} failure`, `${taken} failure`].sort());
});

test('the builds of a replica that stops renewing (died) end as failures naming it once their lease expires', async (t) => {
  const leaseMs = 1500;
  const alive = await replica(t, { leaseMs });
  const other = await replica(t, { leaseMs });
  const dying = await replica(t, { leaseMs });
  // The replica whose read ends a build as lost is told, once for all replicas (its events go out).
  const told: string[] = [];
  alive.registry.onLost((record) => told.push(`${record.id} ${record.status ?? ''}`));
  other.registry.onLost((record) => told.push(`${record.id} ${record.status ?? ''}`));
  const kept = await alive.registry.start(newBuild('alive'));
  const lost = await dying.registry.start(newBuild('dying'));
  const runningIds = async (): Promise<string[]> =>
    (await listed(alive.registry, { status: 'running' })).map((r) => r.id).sort();
  t.deepEqual(await runningIds(), [kept, lost].sort());
  // SIGKILL stand-in: no more renewals, the connection gone.
  dying.registry.close();
  dying.connection.client.disconnect();
  const started = Date.now();
  await eventually(async () => !(await runningIds()).includes(lost), {
    timeout: leaseMs * 20, // room for a loaded machine
    interval: 100,
    what: `build ${lost} to leave the running list`,
  });
  t.deepEqual(await runningIds(), [kept]);
  t.log(`gone after ${Date.now() - started} ms`);
  const ended = await alive.registry.get(lost);
  await other.registry.get(lost);
  await listed(other.registry);
  t.deepEqual(told, [`${lost} failure`]);
  t.is(ended?.status, 'failure');
  t.deepEqual(ended?.answer, {
    status: 500,
    body: serviceError('BUILD_LOST', { replica: 'test-replica' }).toBody(),
  });
});

test('a build whose replica beats is not lost when its lease lapses: the replica takes it again', async (t) => {
  const leaseMs = 1500;
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const live = await replica(t, { server, leaseMs, name: 'live' });
  const reader = await replica(t, { server, leaseMs, name: 'reader' });
  const id = await live.registry.start(newBuild('lapsed'));
  const client = reader.connection.client;
  await client.set(replicaAliveKey('live'), '1', 'PX', 60_000);
  // Redis failed longer than a lease: the lease ran out while the build ran on.
  await client.del(buildAliveKey(id));
  t.is((await reader.registry.get(id))?.phase, 'cloning');
  await eventually(async () => (await client.get(buildAliveKey(id))) === 'live', {
    timeout: leaseMs * 10,
    interval: 50,
    what: 'the live replica to take its lease again',
  });
  t.is(await client.exists(buildUnleasedKey(id)), 0, 'the read left a mark, dropped with the lease taken');
  t.is((await reader.registry.get(id))?.phase, 'cloning');
});

test('a build whose replica beats but no longer renews is lost only after four times the wait', async (t) => {
  const leaseMs = 1500;
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const stale = await replica(t, { server, leaseMs, name: 'stale' });
  const dead = await replica(t, { server, leaseMs, name: 'dead' });
  const reader = await replica(t, { server, leaseMs, name: 'reader' });
  const client = reader.connection.client;
  await client.set(replicaAliveKey('stale'), '1', 'PX', 60_000);
  const beating = await stale.registry.start(newBuild('beating'));
  const gone = await dead.registry.start(newBuild('gone'));
  // Neither renews any more (a finish that never landed; a process that died): leases run out.
  stale.registry.close();
  dead.registry.close();
  await eventually(async () => (await client.exists(buildAliveKey(beating), buildAliveKey(gone))) === 0, {
    timeout: leaseMs * 10,
    interval: 50,
    what: 'both leases to run out',
  });
  const phases = async () => [
    (await reader.registry.get(beating))?.phase,
    (await reader.registry.get(gone))?.phase,
  ];
  t.deepEqual(await phases(), ['cloning', 'cloning'], 'a first read ends neither');
  await eventually(async () => (await phases())[1] === 'finished', {
    timeout: leaseMs * 10,
    interval: 50,
    what: 'the build of the replica that stopped beating to end',
  });
  t.is((await phases())[0], 'cloning', 'the one whose replica beats still runs');
  await eventually(async () => (await phases())[0] === 'finished', {
    timeout: leaseMs * 20,
    interval: 50,
    what: 'the build its beating replica no longer renews to end',
  });
  t.is((await reader.registry.get(beating))?.status, 'failure');
});
