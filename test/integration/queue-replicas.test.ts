/**
 * Redis mode, three real service processes of one slot each, one queue for all (docs/queue.md):
 * builds accepted by a replica whose slot is full run on the others, and when that replica is
 * lost (SIGKILL of it and its children) while it holds queued builds, every one of them runs on
 * another replica, exactly once. The requests carry no credentials of their own: the replicas
 * have the stack's git credentials as server entries, so any of them can run any queued build.
 * Each scenario runs on a redis-server and on a three-master Redis Cluster, with the same assertions.
 */
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { queueFile, replicaSets } from '../helpers/replica-sets.js';
import {
  getBuild,
  postAsync as post,
  replicaEnv,
  succeededOn,
  untilFinished,
  type Replica,
} from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

const file = queueFile(stack, 'queue-replicas');
const replicasOn = replicaSets(['a', 'b', 'c'], (redis) =>
  replicaEnv(stack, redis, { MAX_CONCURRENT_BUILDS: '1', GIT_CREDENTIALS_CONFIG_PATH: file.credentials }),
);

/** A repository of its own: a cheap build, or one whose step waits (until cancelled). */
function repository(kind: 'cheap' | 'slow'): string {
  const nonce = randomBytes(8).toString('hex');
  return file.repository(
    kind === 'slow'
      ? SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce, 600)
      : `FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_QUEUE_NONCE=${nonce}\n`,
  );
}

const postAsync = (replica: Replica, repo: string): Promise<BuildRecord> =>
  post(replica, repo, { registry: stack.REGISTRY_ANON, name: uniqueName('queue-r') });

/**
 * Holds `replica`'s one slot with a build whose step waits; its id (DELETE on any replica frees it).
 * A build whose record just finished frees its slot a moment later, and a new build waits while
 * any build waits in the shared queue: one that was queued is taken out, and the hold asked again.
 */
async function holdSlot(t: ExecutionContext, replica: Replica): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    await eventually(async () => (await metricValue(replica.url, 'service_builds_in_flight')) === 0, {
      timeout: 60_000,
      interval: 100,
      what: `replica ${replica.name}'s slot to be free`,
    });
    const held = await postAsync(replica, repository('slow'));
    if (held.phase !== 'queued') return held.id;
    await cancel(replica, held.id);
    await untilFinished(replica, [held.id]);
    if (attempt === 5) {
      t.fail(`replica ${replica.name}'s slot is held: the hold was queued 5 times`);
      return held.id;
    }
  }
}

const cancel = async (replica: Replica, id: string): Promise<void> => {
  await fetch(`${replica.url}/builds/${id}`, { method: 'DELETE' });
};

for (const kind of REDIS_KINDS) {
  test.serial(`${kind}: builds accepted by a replica whose slot is full run on the others`, async (t) => {
    const { replicas } = await replicasOn(kind);
    const [a, b] = replicas as [Replica, Replica, Replica];
    const hold = await holdSlot(t, a);
    const accepted = [await postAsync(a, repository('cheap')), await postAsync(a, repository('cheap'))];
    const records = await untilFinished(
      b,
      accepted.map((r) => r.id),
    );
    t.deepEqual(
      records.map((r) => r.status),
      ['success', 'success'],
    );
    for (const { id } of accepted) {
      const ran = succeededOn(replicas, id);
      t.is(ran.a, 0, 'not on the replica that accepted it');
      t.is((ran.b ?? 0) + (ran.c ?? 0), 1, JSON.stringify(ran));
    }
    t.is((await getBuild(a, hold)).phase !== 'finished', true, 'the slot of a stayed held meanwhile');
    await cancel(a, hold);
    await untilFinished(a, [hold]);
  });

  test.serial(
    `${kind}: a replica lost while it holds queued builds: each runs on another, exactly once`,
    async (t) => {
      const { replicas } = await replicasOn(kind);
      const [a, b, c] = replicas as [Replica, Replica, Replica];
      const holds = [await holdSlot(t, a), await holdSlot(t, b), await holdSlot(t, c)];
      const accepted = [];
      for (let i = 0; i < 4; i += 1) accepted.push(await postAsync(a, repository('cheap')));
      t.true(
        accepted.every((r) => r.phase === 'queued'),
        'every slot is full: they wait',
      );
      await a.service.lose();
      await Promise.all([cancel(b, holds[1] ?? ''), cancel(c, holds[2] ?? '')]);
      const records = await untilFinished(
        b,
        accepted.map((r) => r.id),
      );
      t.deepEqual(
        records.map((r) => r.status),
        ['success', 'success', 'success', 'success'],
        'none lost',
      );
      for (const { id } of accepted) {
        const ran = succeededOn(replicas, id);
        t.is(ran.a, 0);
        t.is((ran.b ?? 0) + (ran.c ?? 0), 1, `run exactly once: ${JSON.stringify(ran)}`);
      }
    },
  );
}
