/**
 * Usage in Redis mode with two real service processes (docs/usage.md): a build accepted by a
 * replica whose one slot is full runs on the other, and its usage is counted once, in buckets
 * both replicas read; the build held meanwhile, cancelled, counts once as failed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { usageRepository } from '../../src/usage/metering.js';
import { ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { replicaEnv, startReplicas, stopReplicas, type Replica } from '../helpers/replicas.js';
import { getUsage } from '../helpers/usage-support.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-usage-replicas-'));
const removals: (() => void)[] = [];
let redis: RedisProcess;
let replicas: Replica[] = [];

test.before(async () => {
  redis = await startRedis();
  const credentials = join(dir, 'git-credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify([
      { host: '127.0.0.1', kind: 'https', username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    ]),
  );
  replicas = await startReplicas(
    ['a', 'b'],
    replicaEnv(stack, redis.url, { MAX_CONCURRENT_BUILDS: '1', GIT_CREDENTIALS_CONFIG_PATH: credentials }),
  );
});

test.after.always(async () => {
  await stopReplicas(replicas);
  await redis?.dispose();
  for (const remove of removals) remove();
  rmSync(dir, { recursive: true, force: true });
});

function repository(dockerfile: string): string {
  const repo = ownDockerfileRepo(dockerfile);
  removals.push(repo.remove);
  return repo.repository;
}

async function postAsync(replica: Replica, repo: string): Promise<BuildRecord> {
  const res = await fetch(`${replica.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify({
      repository: repo,
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('usage-r') },
    }),
  });
  if (res.status !== 202) throw new Error(`POST /build answered ${String(res.status)}: ${await res.text()}`);
  return (await res.json()) as BuildRecord;
}

const get = async (replica: Replica, id: string): Promise<BuildRecord> =>
  (await (await fetch(`${replica.url}/builds/${id}`)).json()) as BuildRecord;

const finished = (replica: Replica, id: string): Promise<BuildRecord> =>
  eventually(
    async () => {
      const record = await get(replica, id);
      return record.phase === 'finished' && record;
    },
    { timeout: 300_000, interval: 250, what: `build ${id} to end` },
  );

test('a build accepted on one replica and run on the other is counted once', async (t) => {
  const [a, b] = replicas as [Replica, Replica];
  const nonce = randomBytes(8).toString('hex');
  const slow = repository(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce, 600));
  const cheap = repository(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_USAGE_NONCE=${nonce}\n`);
  const hold = await postAsync(a, slow);
  t.not(hold.phase, 'queued', "a's slot was free");
  const accepted = await postAsync(a, cheap);
  const record = await finished(b, accepted.id);
  t.is(record.status, 'success');
  const ranOn = (replica: Replica) =>
    replica.service.lines().filter((l) => l.msg === 'build succeeded' && l.buildId === accepted.id).length;
  t.deepEqual([ranOn(a), ranOn(b)], [0, 1], 'run by b, not by a that accepted it');

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
