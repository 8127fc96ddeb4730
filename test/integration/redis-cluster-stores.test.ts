// Each Redis store of the service on a real three-master Redis Cluster of the test's own (Debian's
// redis-server): two connections stand for two replicas. Every script and MULTI must keep its keys
// in one slot (the cluster refuses others), and items spread over the masters. The same stores
// against one server: the other redis-*.test.ts files (the lock runs on both in redis-lock.test.ts).
// Serial: the last test reads the keys the others left.
import test, { type ExecutionContext } from 'ava';
import { Cluster } from 'ioredis';
import { bindKey, reserveKey } from '../../src/builds/redis-idempotency-keys.js';
import { RedisJournal } from '../../src/events/redis-journal.js';
import type { CloudEvent, Delivery } from '../../src/events/types.js';
import { isServiceError } from '../../src/errors/errors.js';
import { createRedisLogStore } from '../../src/logs/redis-store.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { closedKey, textKey } from '../../src/redis/keys.js';
import { RedisServedStore } from '../../src/retention/redis-served.js';
import { redisIdentityKey } from '../../workers/builder/secret-identity-key.js';
import type { AnsweredCommit } from '../../workers/leases/answered-commits.js';
import { createRedisBuildLeases } from '../../workers/leases/redis-leases.js';
import { startRedisCluster, type RedisClusterProcess } from '../helpers/redis-cluster-process.js';
import { readyConnection } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';

let cluster: RedisClusterProcess | undefined;
test.before(async () => {
  cluster = await startRedisCluster();
});
test.after.always(async () => {
  await cluster?.dispose();
});

const started = (): RedisClusterProcess => {
  if (cluster === undefined) throw new Error('the Redis Cluster has not started');
  return cluster;
};

async function connection(t: ExecutionContext): Promise<RedisConnection> {
  const made = await readyConnection(started());
  t.teardown(() => made.close());
  return made;
}

/** A plain cluster client of the test's own, to look at what is stored (once it knows every node). */
async function raw(t: ExecutionContext): Promise<Cluster> {
  const { nodes, password } = started();
  const client = new Cluster(
    nodes.map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
    {
      redisOptions: { password },
    },
  );
  t.teardown(() => client.disconnect());
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return isServiceError(err) ? err.code : String(err);
  }
};

function logStore(t: ExecutionContext, made: RedisConnection, retention: number) {
  const store = createRedisLogStore({
    config: { logs: { retention }, gitCredentials: [], registryAuth: { auths: {} }, redis: {} },
    connection: made,
    logger: silentLogger(),
  });
  t.teardown(() => store.close());
  return store;
}

test.serial(
  'logs: written on one replica, followed and read on another; deleted; retention prunes across slots',
  async (t) => {
    const a = logStore(t, await connection(t), 3);
    const b = logStore(t, await connection(t), 3);
    const first = await a.open('git');
    const followed = await b.follow(first.id);
    first.write('line one\n');
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of followed) chunks.push(Buffer.from(chunk).toString('utf8'));
    })();
    first.write('line two\n');
    await first.close();
    await reading;
    t.is(chunks.join(''), 'line one\nline two\n');
    t.deepEqual(await b.read(first.id), { text: 'line one\nline two\n', complete: true });
    await b.remove(first.id);
    t.is(await codeOf(a.read(first.id)), 'LOG_NOT_FOUND');

    // Ten logs (spread over the masters' slots): the oldest beyond 3 are deleted with their keys.
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const log = await (i % 2 === 0 ? a : b).open('git');
      log.write(`${i}\n`);
      await log.close();
      ids.push(log.id);
    }
    const client = await raw(t);
    const kept = ids.slice(-3);
    t.deepEqual((await client.zrange(closedKey('git'), '0', '-1')).sort(), [...kept].sort());
    for (const id of ids.slice(0, -3)) {
      t.is(await codeOf(a.read(id)), 'LOG_NOT_FOUND', id);
      t.is(await client.exists(textKey(id)), 0, id);
    }
    for (const [i, id] of kept.entries()) t.is((await b.read(id)).text, `${i + 7}\n`);
  },
);

test.serial('build leases: one replica holds, the other follows and gets where the image is', async (t) => {
  const [one, two] = [await connection(t), await connection(t)];
  const a = createRedisBuildLeases({ connection: one, logger: silentLogger(), leaseMs: 3000 });
  const b = createRedisBuildLeases({ connection: two, logger: silentLogger(), leaseMs: 3000 });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const id = `key:registry.example/app:${process.pid}`;
  const holder = await a.holdOrFollow(id, { follow: true });
  if (holder.kind !== 'hold') throw new Error(`expected to hold, got ${holder.kind}`);
  const follower = await b.holdOrFollow(id, { follow: true });
  if (follower.kind !== 'follow') throw new Error(`expected to follow, got ${follower.kind}`);
  const outcome = follower.build.wait(new AbortController().signal);
  const built = { image: 'registry.example/app:1', registry: 'registry.example', name: 'app', tag: '1' };
  // Renewed meanwhile (one script per lease): the follower keeps waiting past one lease period.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  await holder.lease.release(built);
  t.deepEqual(await outcome, { ok: true, built });
  t.is((await a.holdOrFollow(id, { follow: true })).kind, 'hold', 'released: free again');
});

test.serial('answered commits and Idempotency-Keys are shared', async (t) => {
  const [one, two] = [await connection(t), await connection(t)];
  const a = createRedisBuildLeases({ connection: one, logger: silentLogger() });
  const b = createRedisBuildLeases({ connection: two, logger: silentLogger() });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const answer: AnsweredCommit = {
    commit: 'a'.repeat(40),
    branch: 'main',
    registry: 'registry.example',
    name: 'app',
    tag: 'sha-aaaaaaa',
    digest: `sha256:${'1'.repeat(64)}`,
    key: 'k'.repeat(64),
    movable: [],
    cliVersion: '0.0.0',
    buildProcessVersion: 1,
    answeredAt: Date.now(),
  };
  await a.answered.set('shape-1', answer);
  t.deepEqual([...(await b.answered.get('shape-1')).keys()], [answer.commit]);
  await b.answered.forget('shape-1', answer.commit);
  t.is((await a.answered.get('shape-1')).size, 0);

  const kept = async () => true;
  t.like(await reserveKey(one, 'idem-1', 'digest-1', kept), { kind: 'reserved' });
  await bindKey(one, 'idem-1', 'build-1');
  t.deepEqual(await reserveKey(two, 'idem-1', 'digest-1', kept), {
    kind: 'taken',
    sameBody: true,
    buildId: 'build-1',
  });
});

test.serial(
  'events: recorded for two subscriptions at once, delivered by the owner, listed on the other replica',
  async (t) => {
    const [one, two] = [await connection(t), await connection(t)];
    const a = RedisJournal.open(one, 'replica-a', ['alpha', 'beta']);
    const b = RedisJournal.open(two, 'replica-b', ['alpha', 'beta']);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    const time = new Date().toISOString();
    const event: CloudEvent = {
      specversion: '1.0',
      id: 'event-1',
      source: 'test',
      type: 'build.finished',
      time,
      subject: 'registry.example/app:1',
      datacontenttype: 'application/json',
      data: {},
    };
    const delivery = (subscription: string): Delivery => ({
      id: event.id,
      subscription,
      type: event.type,
      status: 'pending',
      attempts: 0,
      recordedAt: time,
    });
    t.true(await a.own('alpha'));
    t.false(await b.own('alpha'), 'one owner at a time');
    await a.record(event, [delivery('alpha'), delivery('beta')]);
    t.is(await b.pending('beta'), 1);
    const head = await a.head('alpha');
    t.is(head?.event.id, 'event-1');
    if (head !== undefined) await a.done('alpha', head);
    await a.saveDelivery({ ...delivery('alpha'), status: 'delivered', attempts: 1 });
    t.is(await b.pending('alpha'), 0);
    t.is((await b.delivery('alpha', 'event-1'))?.status, 'delivered');
    t.deepEqual((await b.deliveries({})).map((d) => d.subscription).sort(), ['alpha', 'beta']);
  },
);

test.serial('retention marks, and the secrets identity key, are shared', async (t) => {
  const [one, two] = [await connection(t), await connection(t)];
  const repository = { registry: 'registry.example', name: 'app', repository: 'registry.example/app' };
  await new RedisServedStore(one).mark(repository, ['1', `sha256:${'2'.repeat(64)}`]);
  t.deepEqual([...(await new RedisServedStore(two).servedTimes(repository.repository)).keys()].sort(), [
    '1',
    `sha256:${'2'.repeat(64)}`,
  ]);
  t.deepEqual(
    (await new RedisServedStore(two).repositories()).map((r) => `${r.registry}/${r.name}`),
    [repository.repository],
  );
  t.true(await new RedisServedStore(two).exclusive(async () => undefined));
  const [keyA, keyB] = await Promise.all([redisIdentityKey(one)(), redisIdentityKey(two)()]);
  t.is(keyA.length, 32);
  t.deepEqual(keyA, keyB);
});

test.serial(
  'the stores keep no key outside a hash tag, and their items spread over the masters',
  async (t) => {
    const client = await raw(t);
    const keys = (await Promise.all(client.nodes('master').map((node) => node.keys('ibs:*')))).flat();
    t.true(keys.length > 0);
    for (const key of keys) t.regex(key, /^ibs:\{[^}]+\}/, key);
    const perMaster = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    t.is(perMaster.filter((n) => n > 0).length, 3, `keys per master: ${perMaster.join(', ')}`);
  },
);
