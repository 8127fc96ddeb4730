/**
 * Usage in Redis mode with two real service processes (docs/usage.md): a build accepted by a
 * replica whose one slot is full runs on the other, and its usage is counted once, in buckets
 * both replicas read; the build held meanwhile, cancelled, counts once as failed. On a redis-server
 * and on a three-master Redis Cluster, with the same assertions.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { usageRepository } from '../../src/usage/metering.js';
import { stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { queueFile, replicaSets } from '../helpers/replica-sets.js';
import {
  postAsync as post,
  replicaEnv,
  succeededOn,
  untilFinished,
  type Replica,
} from '../helpers/replicas.js';
import { getUsage } from '../helpers/usage-support.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

const file = queueFile(stack, 'usage-replicas');
const replicasOn = replicaSets(['a', 'b'], (redis) =>
  replicaEnv(stack, redis, { MAX_CONCURRENT_BUILDS: '1', GIT_CREDENTIALS_CONFIG_PATH: file.credentials }),
);
const repository = (dockerfile: string): string => file.repository(dockerfile);

const postAsync = (replica: Replica, repo: string): Promise<BuildRecord> =>
  post(replica, repo, { registry: stack.REGISTRY_ANON, name: uniqueName('usage-r') });

const finished = async (replica: Replica, id: string): Promise<BuildRecord> =>
  (await untilFinished(replica, [id]))[0] as BuildRecord;

for (const kind of REDIS_KINDS) {
  test.serial(`${kind}: a build accepted on one replica and run on the other is counted once`, async (t) => {
    const { replicas } = await replicasOn(kind);
    const [a, b] = replicas as [Replica, Replica];
    const nonce = randomBytes(8).toString('hex');
    const slow = repository(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce, 600));
    const cheap = repository(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_USAGE_NONCE=${nonce}\n`);
    const hold = await postAsync(a, slow);
    t.not(hold.phase, 'queued', "a's slot was free");
    const accepted = await postAsync(a, cheap);
    const record = await finished(b, accepted.id);
    t.is(record.status, 'success');
    t.deepEqual(succeededOn(replicas, accepted.id), { a: 0, b: 1 }, 'run by b, not by a that accepted it');

    const tenants = { cheap: usageRepository(cheap).tenant, slow: usageRepository(slow).tenant };
    const rowsOf = async (replica: Replica, tenant: string) =>
      (await getUsage(replica.url, '?by=tenant')).body.rows.filter((row) => row.tenant === tenant);
    const [row] = await eventually(async () => {
      const rows = await rowsOf(a, tenants.cheap);
      return rows.length > 0 && rows;
    });
    t.like(row, { builds: 1, reused: 0, failed: 0 });
    t.true(Math.abs((row?.runSeconds ?? 0) - (record.durationSeconds ?? 0)) <= 1);
    t.deepEqual(await rowsOf(b, tenants.cheap), [row]);

    // The held build, cancelled, counts once as failed.
    await fetch(`${a.url}/builds/${hold.id}`, { method: 'DELETE' });
    await finished(b, hold.id);
    const [held] = await eventually(async () => {
      const rows = await rowsOf(b, tenants.slow);
      return rows.length > 0 && rows;
    });
    t.like(held, { builds: 1, failed: 1 });
    const counted = await Promise.all(
      [a, b].map((replica) =>
        metricValue(replica.url, 'service_tenant_builds_total', { tenant: 'other', outcome: 'built' }),
      ),
    );
    t.is(
      counted.reduce((sum, n) => sum + n, 0),
      1,
      'one replica counted the build',
    );
  });
}
