/**
 * GET /builds through the real app and build router, the job a fake that reports as the real one
 * does; and the 429's Retry-After estimated from builds of known duration.
 */
import test from 'ava';
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import type { BuildRecord } from '../../../../src/builds/types.js';
import { serviceError } from '../../../../src/errors/errors.js';
import type { BuildJobRunner } from '../../../../workers/build-worker.js';
import type { BuildResult } from '../../../../workers/plan/plan-types.js';
import { startApp, testConfig, type RunningApp } from '../../../helpers/app.js';
import { REPO } from '../../../helpers/fake-build.js';
import { eventually } from '../../../helpers/eventually.js';
import { metricValue } from '../../../helpers/metrics.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const GIT_LOG = 'git-00000000-0000-4000-8000-000000000000';
const IMG_LOG = 'img-00000000-0000-4000-8000-000000000001';

/** Steps the test releases one by one, so it can look at each phase. */
function steppedRunner() {
  const gates: Array<() => void> = [];
  const reached: string[] = [];
  const step = (name: string) =>
    new Promise<void>((resolve) => {
      reached.push(name);
      gates.push(resolve);
    });
  const runJob: BuildJobRunner = async (plan, _deps, _signal, reporter) => {
    await reporter.logOpened('git', GIT_LOG);
    await step('cloning');
    const image = `${plan.image.registry}/${plan.image.name}:sha-0123456`;
    await reporter.resolved({ branch: plan.branch ?? 'main', commit: COMMIT, image });
    await reporter.phase('resolving');
    if (plan.branch === 'no-definition') throw serviceError('NO_DEFINITION');
    await reporter.phase('building');
    await reporter.logOpened('img', IMG_LOG);
    await step('building');
    if (plan.branch === 'broken')
      throw serviceError(
        'COMMAND_FAILED',
        { command: 'devcontainer build', outcome: 'exited with code 1' },
        { logId: IMG_LOG },
      );
    const result: BuildResult = {
      image,
      registry: plan.image.registry,
      name: plan.image.name,
      tag: 'sha-0123456',
      branch: plan.branch ?? 'main',
      commit: COMMIT,
      gitCloneLogId: GIT_LOG,
      imageBuildLogId: IMG_LOG,
      digest: `sha256:${'d'.repeat(64)}`,
    };
    return result;
  };
  const next = async (name: string): Promise<void> => {
    await eventually(() => reached.length > 0 && reached.at(-1) === name && gates.length > 0, { what: name });
    gates.shift()?.();
  };
  return { runJob, reached, next };
}

async function listBuilds(app: RunningApp, query = ''): Promise<BuildRecord[]> {
  const res = await fetch(`${app.url}/builds${query}`);
  if (res.status !== 200) throw new Error(`GET /builds${query} answered ${res.status}`);
  return ((await res.json()) as { builds: BuildRecord[] }).builds;
}

const post = (app: RunningApp, requestId: string, body: object) =>
  fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Request-Id': requestId },
    body: JSON.stringify({ repository: REPO, image: { registry: 'registry.example.com' }, ...body }),
  });

test('a build is listed while it runs, phase by phase with its log ids, then finished with its outcome', async (t) => {
  const runner = steppedRunner();
  const app = await startApp({}, { app: { build: { runJob: runner.runJob } } });
  t.teardown(app.close);
  const answer = post(app, 'ci-1', { image: { registry: 'registry.example.com', name: 'team/app' } });

  await eventually(() => runner.reached.includes('cloning'), { what: 'the clone' });
  const [cloning] = await listBuilds(app);
  t.like(cloning, {
    requestId: 'ci-1',
    repository: REPO,
    image: 'registry.example.com/team/app',
    phase: 'cloning',
    gitCloneLogId: GIT_LOG,
    waiters: 1,
  });
  t.regex(cloning?.id ?? '', /^bld-/);
  t.false('commit' in (cloning ?? {}));
  t.false('imageBuildLogId' in (cloning ?? {}));
  t.false('status' in (cloning ?? {}));
  t.true(Date.parse(cloning?.startedAt ?? '') <= Date.now());
  t.true((cloning?.elapsedSeconds ?? -1) >= 0);

  await runner.next('cloning');
  await eventually(() => runner.reached.includes('building'), { what: 'the build' });
  const [building] = await listBuilds(app, '?status=running');
  t.like(building, {
    id: cloning?.id,
    phase: 'building',
    branch: 'main',
    commit: COMMIT,
    image: 'registry.example.com/team/app:sha-0123456',
    gitCloneLogId: GIT_LOG,
    imageBuildLogId: IMG_LOG,
  });

  await runner.next('building');
  t.is((await answer).status, 200);
  const [finished] = await listBuilds(app);
  t.like(finished, {
    id: cloning?.id,
    phase: 'finished',
    status: 'success',
    image: 'registry.example.com/team/app:sha-0123456',
    imageBuildLogId: IMG_LOG,
  });
  t.is(typeof finished?.durationSeconds, 'number');
  t.is(finished?.elapsedSeconds, finished?.durationSeconds);
  t.false('error' in (finished ?? {}));
  t.deepEqual(await listBuilds(app, '?status=running'), []);
});

test('failed builds are listed with their metric status and the answer error text; filters select', async (t) => {
  const runner = steppedRunner();
  const app = await startApp({}, { app: { build: { runJob: runner.runJob } } });
  t.teardown(app.close);
  const broken = post(app, 'ci-broken', { branch: 'broken' });
  await runner.next('cloning');
  await runner.next('building');
  const brokenAnswer = (await (await broken).json()) as { error: string };
  const noDef = post(app, 'ci-nodef', {
    branch: 'no-definition',
    repository: 'https://git.example.com/org/other.git',
  });
  await runner.next('cloning');
  t.is((await noDef).status, 400);
  const running = post(app, 'ci-running', {});
  await eventually(() => runner.reached.length === 4, { what: 'the third build' });

  const all = await listBuilds(app);
  t.deepEqual(
    all.map((b) => [b.requestId, b.phase, b.status]),
    [
      ['ci-running', 'cloning', undefined],
      ['ci-nodef', 'finished', 'invalid_request'],
      ['ci-broken', 'finished', 'failure'],
    ],
  );
  t.is(all[2]?.error, brokenAnswer.error);
  t.is(all[2]?.error, 'devcontainer build exited with code 1');
  t.regex(all[1]?.error ?? '', /no dev container definition/);

  const ids = async (query: string) => (await listBuilds(app, query)).map((b) => b.requestId);
  t.deepEqual(await ids('?requestId=ci-broken'), ['ci-broken']);
  t.deepEqual(await ids('?status=running'), ['ci-running']);
  t.deepEqual(await ids('?status=failure'), ['ci-broken']);
  t.deepEqual(await ids('?status=invalid_request'), ['ci-nodef']);
  t.deepEqual(await ids('?status=success'), []);
  t.deepEqual(await ids(`?repository=${encodeURIComponent(REPO)}`), ['ci-running', 'ci-broken']);
  t.deepEqual(await ids(`?repository=${encodeURIComponent(REPO)}&status=failure`), ['ci-broken']);
  t.deepEqual(await ids('?requestId=nobody'), []);
  t.deepEqual(await ids('?tenant=org&status=failure'), ['ci-broken']);
  t.deepEqual(await ids('?tenant=team'), []);
  await runner.next('cloning');
  await runner.next('building');
  t.is((await running).status, 200);
});

test('invalid filters answer 400 with the error body', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const cases: [string, RegExp][] = [
    [
      '?status=done',
      /^invalid filters for GET \/builds: status \(running, or a metric status: success, failure, invalid_request, busy\)$/,
    ],
    ['?status=RUNNING', /status \(running, or a metric status/],
    ['?requestId=a%20b', /^invalid filters for GET \/builds: requestId \(1 to 128 characters/],
    [`?requestId=${'x'.repeat(129)}`, /requestId \(1 to 128/],
    ['?requestId=', /requestId \(1 to 128/],
    ['?repository=', /repository \(the repository as given/],
    ['?repository=a%0Ab', /repository \(/],
    ['?tenant=', /^invalid filters for GET \/builds: tenant \(the build's tenant as the queue names it/],
    ['?tenant=a&tenant=b', /tenant \(/],
    ['?status=running&status=success', /status \(running/],
    [
      '?owner=me',
      /no other filter \(filters: requestId, repository, status, branch, trigger, caller, tenant; page: limit, after\)$/,
    ],
    ['?status=x&requestId=%25', /requestId .*; status |status .*; requestId /],
  ];
  for (const [query, error] of cases) {
    const res = await fetch(`${app.url}/builds${query}`);
    t.is(res.status, 400, query);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { error: string };
    t.deepEqual(Object.keys(body), ['error'], query);
    t.regex(body.error, error, query);
  }
});

test('a 429 carries a Retry-After estimated from the durations of recent successful builds', async (t) => {
  // Builds of known duration, recorded through the registry interface as the build router does.
  const builds = createMemoryBuildRegistry({ history: 50 });
  const finished = async (repository: string, durationSeconds: number, status: 'success' | 'failure') => {
    const id = await builds.start({ requestId: 'earlier', repository, image: 'r/x' });
    await builds.finish(id, { status, durationSeconds });
  };
  const OTHER = 'https://git.example.com/org/other.git';
  await finished(REPO, 60, 'success');
  await finished(REPO, 100, 'success');
  await finished(REPO, 80, 'success');
  await finished(REPO, 2, 'failure'); // failures do not count
  await finished(OTHER, 200, 'success');

  const runner = steppedRunner();
  const app = await startApp(
    // Reuse off: identical requests would follow the running build instead of meeting the 429.
    { build: { ...testConfig({ scratchDir: '/x' }).build, maxConcurrent: 1, reuse: false } },
    { builds, app: { build: { runJob: runner.runJob } } },
  );
  t.teardown(app.close);
  const retryAfter = async (): Promise<number> => {
    const res = await post(app, 'refused', {});
    t.is(res.status, 429);
    t.deepEqual(await res.json(), { error: 'already running 1 builds, the maximum; retry later' });
    return Number(res.headers.get('retry-after'));
  };

  // REPO runs: the median of its successful builds (80 s) less what it ran so far.
  const first = post(app, 'running-1', {});
  await eventually(() => runner.reached.length === 1, { what: 'the first build' });
  const seconds = await retryAfter();
  t.true(seconds >= 71 && seconds <= 80, `Retry-After ${seconds}`); // 70 would count the failure
  await runner.next('cloning');
  await runner.next('building');
  t.is((await first).status, 200);

  // A repository without history of its own: the median of every repository's (60 80 100 200 and
  // the fake build just done, well under a second) is 80.
  const third = post(app, 'running-2', { repository: 'https://git.example.com/org/new.git' });
  await eventually(() => runner.reached.length === 3, { what: 'the second build' });
  const overall = await retryAfter();
  t.true(overall >= 71 && overall <= 80, `Retry-After ${overall}`);
  await runner.next('cloning');
  await runner.next('building');
  t.is((await third).status, 200);
  t.is(await metricValue(app.url, 'service_builds_total', { status: 'busy' }), 2);
});
