// The build leases of Redis mode against a real redis-server of the test's own: two lease objects on
// two connections stand for two replicas. The first holds the lease, the second follows and learns
// the outcome when the holder releases; a holder that stops renewing (its process died) lets its
// follower go once the lease expires, and the lease can then be held again.
import test, { type ExecutionContext } from 'ava';
import {
  STOPPED_WAITING,
  type BuildLeases,
  type FollowedBuild,
  type LeaseRole,
} from '../../workers/leases/leases.js';
import { createRedisBuildLeases, LEASE_LOST } from '../../workers/leases/redis-leases.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { leaseKey, leaseOutcomeKey } from '../../src/redis/keys.js';
import { readyConnection, useRedisServer } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';
import { eventually } from '../helpers/eventually.js';
import { monitorRedis } from '../helpers/redis-monitor.js';

const redis = useRedisServer();

async function replica(
  t: ExecutionContext,
  leaseMs?: number,
): Promise<{ leases: BuildLeases; connection: RedisConnection }> {
  const connection = await readyConnection(redis());
  const leases = createRedisBuildLeases({
    connection,
    logger: silentLogger(),
    ...(leaseMs === undefined ? {} : { leaseMs }),
  });
  t.teardown(async () => {
    await leases.close();
    await connection.close();
  });
  return { leases, connection };
}

/** How many times a follower has read the lease of `id` (the state script, seen by MONITOR). */
async function leaseReads(t: ExecutionContext, id: string): Promise<() => number> {
  const monitor = await monitorRedis(redis().url);
  t.teardown(() => monitor.close());
  // Only the state script names the outcome key while the lease is held (hold and renew do not).
  const read = (line: string): boolean =>
    line.includes('"evalsha"') && line.includes(`"${leaseOutcomeKey(id)}"`);
  return () => monitor.lines().filter(read).length;
}

let ids = 0;
const freshId = (): string => `key:registry.example/app:${process.pid}-${(ids += 1)}`;

const built = {
  image: 'registry.example/app:sha-1234567',
  registry: 'registry.example',
  name: 'app',
  tag: 'sha-1234567',
};

function followed(t: ExecutionContext, role: LeaseRole): FollowedBuild {
  if (role.kind !== 'follow') throw new Error(`expected a follow, got ${role.kind}`);
  t.is(role.build.where, 'another replica');
  return role.build;
}

function held(role: LeaseRole) {
  if (role.kind !== 'hold') throw new Error(`expected to hold the lease, got ${role.kind}`);
  return role.lease;
}

test('the first holds the lease, the second follows and gets where the image is; only that reaches Redis', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const id = freshId();
  const lease = held(await a.leases.holdOrFollow(id, { follow: true }));
  const build = followed(t, await b.leases.holdOrFollow(id, { follow: true }));
  const waiting = build.wait(new AbortController().signal);
  t.truthy(waiting);
  // A build result carries more (commit, log ids): only the image's place is published.
  await lease.release({ ...built, commit: 'c'.repeat(40), imageBuildLogId: 'img-1' } as typeof built);
  t.deepEqual(await waiting, { ok: true, built });
  const stored = JSON.parse((await a.connection.client.get(leaseOutcomeKey(id))) ?? '{}') as Record<
    string,
    unknown
  >;
  t.deepEqual(Object.keys(stored).sort(), ['built', 'token']);
  t.deepEqual(stored.built, built);
  // Released: the lease can be held again.
  t.is((await b.leases.holdOrFollow(id, { follow: true })).kind, 'hold');
});

test('a failed build tells its followers, which then build', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const id = freshId();
  const lease = held(await a.leases.holdOrFollow(id, { follow: true }));
  const waiting = followed(t, await b.leases.holdOrFollow(id, { follow: true })).wait(
    new AbortController().signal,
  );
  await lease.release(undefined);
  t.deepEqual(await waiting, { ok: false, why: 'the build with the same key failed on its replica' });
});

test('a renewed lease keeps its follower waiting; without follow a held key is built unshared', async (t) => {
  // Long enough that a loaded machine's pauses do not skip a renewal's whole period.
  const leaseMs = 1500;
  const a = await replica(t, leaseMs);
  const b = await replica(t, leaseMs);
  const id = freshId();
  const lease = held(await a.leases.holdOrFollow(id, { follow: true }));
  t.deepEqual(await b.leases.holdOrFollow(id, { follow: false }), { kind: 'unshared' });
  const reads = await leaseReads(t, id);
  const waiting = followed(t, await b.leases.holdOrFollow(id, { follow: true })).wait(
    new AbortController().signal,
  );
  let settled = false;
  void waiting?.then(() => (settled = true));
  // The follower reads the lease on asking for it, on starting to wait, then each time the PTTL it read
  // has passed, and reads again only while the lease was held: six reads are three lease periods
  // the renewals kept it through.
  await eventually(() => reads() >= 6 || settled, {
    timeout: leaseMs * 40,
    what: () => `six reads of the lease by its follower (${reads()} so far)`,
  });
  t.false(settled, 'the follower keeps waiting');
  t.truthy(await a.connection.client.get(leaseKey(id)), 'the lease is still held');
  await lease.release(built);
  t.deepEqual(await waiting, { ok: true, built });
});

test('a holder that stops renewing (its replica died): its follower gives up once the lease expires and the lease is held again', async (t) => {
  const leaseMs = 600;
  const a = await replica(t, leaseMs);
  const b = await replica(t, leaseMs);
  const id = freshId();
  const lease = held(await a.leases.holdOrFollow(id, { follow: true }));
  const waiting = followed(t, await b.leases.holdOrFollow(id, { follow: true })).wait(
    new AbortController().signal,
  );
  // A's process "dies": no more renewals, no release.
  await a.leases.close();
  const started = Date.now();
  t.deepEqual(await waiting, { ok: false, why: LEASE_LOST, lost: true });
  // The holder never released: giving up at all is the lease's doing. The bound only tells that
  // from a hang, with room for a loaded machine (20 lease periods).
  t.true(Date.now() - started < leaseMs * 20, `gave up after ${Date.now() - started} ms`);
  // Another replica holds the lease now; the dead holder's late release changes nothing.
  const takeover = held(await b.leases.holdOrFollow(id, { follow: true }));
  await lease.release(built);
  const c = await replica(t, leaseMs);
  const third = followed(t, await c.leases.holdOrFollow(id, { follow: true })).wait(
    new AbortController().signal,
  );
  await takeover.release(undefined);
  t.deepEqual(await third, { ok: false, why: 'the build with the same key failed on its replica' });
});

test('a follower that stops waiting is answered at once', async (t) => {
  // The holder keeps the lease all along: only the abort can answer the follower (else a hang).
  t.timeout(60_000);
  const a = await replica(t);
  const b = await replica(t);
  const id = freshId();
  const lease = held(await a.leases.holdOrFollow(id, { follow: true }));
  t.teardown(() => lease.release(undefined));
  const stop = new AbortController();
  const waiting = followed(t, await b.leases.holdOrFollow(id, { follow: true })).wait(stop.signal);
  stop.abort();
  t.deepEqual(await waiting, { ok: false, why: STOPPED_WAITING });
});
