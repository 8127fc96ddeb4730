// A reconcile storm in Redis mode, four real service processes of two slots each: one pass over
// STORM_REPOSITORIES configured repositories (200 by default; `STORM_REPOSITORIES=2000` runs the
// full storm) that have no image yet queues every one of them, though the API's
// `build.maxQueued` is 5 (prebuilds have their own bound, docs/queue.md); each is built or reused
// exactly once, none is skipped; a CI build of another tenant arriving in the middle starts within
// one turn of the slots.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { httpsRepo, ownDockerfileRepo, stack } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { startRedis } from '../helpers/redis-process.js';
import { listBuilds, replicaEnv, startReplicas, stopReplicas } from '../helpers/replicas.js';

const REPOSITORIES = Number(process.env.STORM_REPOSITORIES ?? 200);
const REPLICAS = 4;
const SLOTS = 2;

/** `count` served repositories of one tenant, copies of one with a cheap definition. */
function stormRepositories(run: string, count: number): { urls: string[]; remove: () => void } {
  const first = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_STORM=${run}\n`);
  const source = join(stack.GIT_REPOS_DIR, `${first.name}.git`);
  const tenant = join(stack.GIT_REPOS_DIR, `storm-${run}`);
  const names = Array.from({ length: count }, (_, i) => `storm-${run}/repo-${i}`);
  for (const name of names) cpSync(source, join(stack.GIT_REPOS_DIR, `${name}.git`), { recursive: true });
  return {
    urls: names.map(httpsRepo),
    remove: () => {
      first.remove();
      rmSync(tenant, { recursive: true, force: true });
    },
  };
}

test('a reconcile storm queues every repository once; a CI build of another tenant starts next', async (t) => {
  t.timeout(1_800_000);
  const run = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ibs-storm-'));
  const redis = await startRedis();
  const repos = stormRepositories(run, REPOSITORIES);
  t.teardown(async () => {
    repos.remove();
    await redis.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const images = repos.urls.map((_, i) => `it/storm-${run}/repo-${i}`);
  writeFileSync(
    join(dir, 'prebuilds.json'),
    JSON.stringify(
      repos.urls.map((repository, i) => ({
        repository,
        branches: ['main'],
        image: { registry: stack.REGISTRY_ANON, name: images[i] },
      })),
    ),
  );
  writeFileSync(
    join(dir, 'git-credentials.json'),
    JSON.stringify([
      { host: '127.0.0.1', kind: 'https', username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    ]),
  );
  const replicas = await startReplicas(
    Array.from({ length: REPLICAS }, (_, i) => `r${i}`),
    replicaEnv(stack, redis.url, {
      MAX_CONCURRENT_BUILDS: String(SLOTS),
      MAX_QUEUED_BUILDS: '5',
      BUILD_HISTORY: String(REPOSITORIES + 50),
      PREBUILD_CONFIGURATIONS_PATH: join(dir, 'prebuilds.json'),
      GIT_CREDENTIALS_CONFIG_PATH: join(dir, 'git-credentials.json'),
      PREBUILD_RECONCILE_INTERVAL_SECONDS: '3600',
    }),
  );
  t.teardown(() => stopReplicas(replicas));
  const [front, other] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
  const storm = async (): Promise<BuildRecord[]> =>
    (await listBuilds(front, '')).filter((r) => r.trigger === 'reconcile');
  const queuedNow = async (): Promise<number> =>
    (await listBuilds(front, 'status=queued')).filter((r) => r.trigger === 'reconcile').length;

  const started = Date.now();
  await eventually(async () => (await queuedNow()) >= Math.min(20, REPOSITORIES / 2), {
    timeout: 600_000,
    interval: 250,
    what: 'the storm to fill the queue',
  });
  // The CI build of another tenant, in the middle of the storm.
  const ci = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_STORM_CI=${run}\n`);
  t.teardown(ci.remove);
  const queuedBefore = await queuedNow();
  const answer = await fetch(`${other.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify({
      repository: ci.repository,
      image: { registry: stack.REGISTRY_ANON, name: `it/storm-${run}/ci` },
    }),
  });
  const accepted = { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  t.is(accepted.status, 202, JSON.stringify(accepted.body));
  const ciId = String(accepted.body.id);
  if (accepted.body.phase === 'queued') t.deepEqual(accepted.body.queue, { position: 1, ahead: 0 });
  let queuedAtStart = queuedBefore;
  await eventually(
    async () => {
      const [record] = (await listBuilds(front, '')).filter((r) => r.id === ciId);
      queuedAtStart = await queuedNow();
      return record !== undefined && record.phase !== 'queued';
    },
    { timeout: 600_000, interval: 100, what: 'the CI build to start' },
  );
  t.true(
    queuedBefore - queuedAtStart <= REPLICAS * SLOTS,
    `${queuedBefore - queuedAtStart} prebuilds started before the CI build (one turn: ${REPLICAS * SLOTS})`,
  );

  let allQueuedMs: number | undefined;
  await eventually(
    async () => {
      const records = await storm();
      if (records.length >= REPOSITORIES) allQueuedMs ??= Date.now() - started;
      return records.length >= REPOSITORIES && records.every((r) => r.phase === 'finished');
    },
    { timeout: 1_500_000, interval: 1000, what: 'every prebuild of the storm to end' },
  );
  const records = await storm();
  t.log(
    `${REPOSITORIES} repositories, ${REPLICAS} replicas: all queued or started within ${String(allQueuedMs)} ms, all ended after ${Date.now() - started} ms`,
  );
  t.is(records.length, REPOSITORIES, 'one build per repository, none skipped');
  t.deepEqual(
    [...new Set(records.map((r) => r.image))].length,
    REPOSITORIES,
    'each repository built or reused exactly once',
  );
  t.deepEqual(
    records.filter((r) => r.status !== 'success').map((r) => `${r.repository} ${r.status ?? ''}`),
    [],
  );
  const skipped = replicas.flatMap((r) =>
    r.service.lines().filter((l) => /not started|not read/.test(String(l.msg))),
  );
  t.deepEqual(skipped, [], 'no prebuild skipped or refused');
});
