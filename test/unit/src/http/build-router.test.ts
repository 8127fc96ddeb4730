/**
 * POST /build through real HTTP with the real app (error middleware, body parser, metrics),
 * the build router built with an injected job runner so the test sees every invocation.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { AppContext } from '../../../../src/http/context.js';
import { serviceError, ServiceError } from '../../../../src/errors/errors.js';
import type { BuildJobRunner } from '../../../../workers/build-worker.js';
import type { BuildPlan } from '../../../../workers/plan/plan-types.js';
import { startApp, testConfig, type ConfigOverrides } from '../../../helpers/app.js';
import { REPO, RESULT } from '../../../helpers/fake-build.js';
import { eventually } from '../../../helpers/eventually.js';
import { metricValue, scrapeMetrics } from '../../../helpers/metrics.js';

interface Harness {
  url: string;
  ctx: AppContext;
  calls: BuildPlan[];
  logText: () => string;
}

/** The real app on port 0, its build router using `runJob` (every invocation recorded). */
async function startWithRunner(
  t: ExecutionContext,
  runJob: BuildJobRunner,
  overrides: ConfigOverrides = {},
): Promise<Harness> {
  const calls: BuildPlan[] = [];
  const app = await startApp(overrides, {
    app: {
      build: {
        runJob: (plan, c, signal, reporter) => {
          calls.push(plan);
          return runJob(plan, c, signal, reporter);
        },
      },
    },
  });
  t.teardown(app.close);
  return { url: app.url, ctx: app.ctx, calls, logText: app.logText };
}

const post = (url: string, body: unknown) =>
  fetch(`${url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** `service_builds_total` and the duration histogram's counts, as GET /metrics shows them. */
async function buildMetrics(
  url: string,
): Promise<{ total: Record<string, number>; timed: Record<string, number> }> {
  const { samples } = await scrapeMetrics(url);
  const byStatus = (name: string): Record<string, number> =>
    Object.fromEntries(
      samples.filter((s) => s.name === name).map((s) => [s.labels.status ?? '', s.value] as const),
    );
  return { total: byStatus('service_builds_total'), timed: byStatus('service_build_duration_seconds_count') };
}

const gauge = (url: string, name: string): Promise<number> => metricValue(url, name);

test('a 400 never reaches the job: hostile inputs and every contract 400 row, canary never created', async (t) => {
  const canaryDir = await mkdtemp(join(tmpdir(), 'ibs-canary-'));
  t.teardown(() => rm(canaryDir, { recursive: true, force: true }));
  const canary = join(canaryDir, 'canary');
  // The fake job would create the canary, as a real command would.
  const app = await startWithRunner(
    t,
    async () => {
      await writeFile(canary, 'ran');
      return RESULT;
    },
    {
      sshHostKeyPolicy: 'pinned',
      gitCredentials: [{ host: 'h.example', kind: 'ssh', privateKey: 'PRIVATE-KEY-MATERIAL' }],
    },
  );
  const reg = { image: { registry: 'registry.example.com' } };
  const cases: [unknown, RegExp | string][] = [
    [
      { repository: `ext::sh -c touch% ${canary}`, ...reg },
      `unable to parse git repository URL: ext::sh -c touch% ${canary}`,
    ],
    [
      { repository: `ssh://-oProxyCommand=touch ${canary}/x`, ...reg },
      /^unable to parse git repository URL: /,
    ],
    [{ repository: `--upload-pack=touch ${canary}`, ...reg }, /^unable to parse git repository URL: /],
    [{ repository: 'file:///etc', ...reg }, /^repository URL scheme "file:\/\/" is not allowed: /],
    [{ repository: 'git://h/x', ...reg }, /^repository URL scheme "git:\/\/" is not allowed: /],
    [{ repository: 'https://user:tok@host/x', ...reg }, /^repository URL must not contain credentials/],
    [{ repository: `${REPO}\r\n`, ...reg }, /^unable to parse git repository URL: /],
    [{ repository: REPO, ...reg, branch: '--upload-pack=x' }, /^invalid branch "--upload-pack=x"/],
    [{ repository: REPO, ...reg, branch: 'main\r\nX-Evil: 1' }, /^invalid branch /],
    [
      { repository: REPO, image: { registry: 'r.io', tag: 'v1\r\n' } },
      /^missing or invalid fields: repository \(required\); /,
    ],
    [
      { repository: REPO, ...reg, gitCredentials: { username: 'u', token: 'tok\nen' } },
      /^missing or invalid fields: repository \(required\); /,
    ],
    [[REPO], /^missing or invalid fields: repository \(required\); branch \(optional/],
    [{ branch: 'main' }, /^missing or invalid fields: repository \(required\); /],
    [{ repository: REPO, ...reg, platforms: ['linux'] }, /^missing or invalid fields: /],
    [{ repository: REPO, ...reg, buildOptions: { mode: 'sometimes' } }, /^missing or invalid fields: /],
    [
      { repository: REPO, ...reg, buildOptions: { cacheTo: `type=local,dest=${canaryDir}` } },
      'buildOptions.cacheTo: cache type "local" is not allowed (allowed: registry, gha, inline)',
    ],
    [
      { repository: REPO, ...reg, buildOptions: { cacheFrom: 'type=s3' } },
      'buildOptions.cacheFrom: cache type "s3" is not allowed (allowed: registry, gha, inline)',
    ],
    [
      { repository: 'https://h/org/.git', ...reg },
      'unable to derive an image name from repository path org/.git: provide image.name',
    ],
    [
      { repository: REPO },
      `no registry resolved for repository ${REPO}: provide image.registry or configure a matching registry mapping rule`,
    ],
    [
      { repository: 'git@h.example:org/x.git', ...reg },
      'SSH host key policy is "pinned" but no pinned key configured for host h.example',
    ],
  ];
  for (const [body, expected] of cases) {
    const res = await post(app.url, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    const json = (await res.json()) as { error: string };
    t.deepEqual(Object.keys(json), ['error']);
    if (typeof expected === 'string') t.is(json.error, expected);
    else t.regex(json.error, expected);
  }
  t.is(app.calls.length, 0, 'the job runner was never invoked');
  t.false(existsSync(canary), 'no command ran');
  const { total, timed } = await buildMetrics(app.url);
  t.is(total.invalid_request, cases.length);
  t.is(total.success, 0);
  t.is(timed.invalid_request, 0, 'refused requests are not timed as builds');
  t.false(app.logText().includes('tok\\nen'), 'request secrets are not logged');
  t.false(app.logText().includes('PRIVATE-KEY-MATERIAL'));
});

test('the real app (default runner) answers 400 without running anything', async (t) => {
  const canaryDir = await mkdtemp(join(tmpdir(), 'ibs-canary-'));
  t.teardown(() => rm(canaryDir, { recursive: true, force: true }));
  const app = await startApp({ git: { allowInsecureProtocols: true } });
  t.teardown(app.close);
  for (const repository of [
    `ext::sh -c touch% ${canaryDir}/a`,
    `ssh://-oProxyCommand=touch ${canaryDir}/b/x`,
    `--upload-pack=touch ${canaryDir}/c`,
    'file:///etc',
  ]) {
    const res = await post(app.url, { repository, image: { registry: 'r.io' } });
    t.is(res.status, 400, repository);
  }
  const res = await post(app.url, {
    repository: 'https://h/x',
    image: { registry: 'r.io' },
    branch: '--upload-pack=x',
  });
  t.is(res.status, 400);
  for (const f of ['a', 'b', 'c']) t.false(existsSync(join(canaryDir, f)));
});

test('success: 200 with the BuildResult, the plan handed to the job, counted and timed as success', async (t) => {
  const signals: AbortSignal[] = [];
  const app = await startWithRunner(t, (_plan, _ctx, signal) => {
    signals.push(signal);
    return Promise.resolve(RESULT);
  });
  const res = await post(app.url, {
    repository: REPO,
    image: { registry: 'registry.example.com' },
    gitCredentials: { username: 'me', token: 'secret-token-1' },
    platforms: ['linux/amd64'],
    unknownField: true,
  });
  t.is(res.status, 200);
  t.deepEqual(await res.json(), RESULT);
  t.is(app.calls.length, 1);
  t.is(app.calls[0]?.url.cloneUrl, REPO);
  t.deepEqual(app.calls[0]?.gitCredential, { kind: 'https', username: 'me', token: 'secret-token-1' });
  t.deepEqual(app.calls[0]?.platforms, ['linux/amd64']);
  t.true(signals[0] instanceof AbortSignal);
  const { total, timed } = await buildMetrics(app.url);
  t.deepEqual(total, { success: 1, failure: 0, invalid_request: 0, busy: 0 });
  t.is(timed.success, 1);
  t.false(app.logText().includes('secret-token-1'));
});

test('job errors: 4xx counted invalid_request, 5xx and unexpected errors counted failure, all timed', async (t) => {
  const errors: unknown[] = [
    new ServiceError('NO_DEFINITION', 'no dev container definition and no fallback image configured'),
    serviceError(
      'COMMAND_FAILED',
      {
        command: 'git clone --depth 1 -- https://git.example.com/org/app.git',
        outcome: 'exited with code 128',
      },
      { logId: 'git-1234' },
    ),
    new Error('unexpected'),
  ];
  let i = 0;
  const app = await startWithRunner(t, () => Promise.reject(errors[i++]));
  const body = { repository: REPO, image: { registry: 'registry.example.com' } };

  const r1 = await post(app.url, body);
  t.is(r1.status, 400);
  t.deepEqual(await r1.json(), { error: 'no dev container definition and no fallback image configured' });

  const r2 = await post(app.url, body);
  t.is(r2.status, 500);
  t.deepEqual(await r2.json(), {
    error: 'git clone --depth 1 -- https://git.example.com/org/app.git exited with code 128',
    logId: 'git-1234',
  });

  const r3 = await post(app.url, body);
  t.is(r3.status, 500);
  t.deepEqual(await r3.json(), { error: 'internal error' });

  const { total, timed } = await buildMetrics(app.url);
  t.deepEqual(total, { success: 0, failure: 2, invalid_request: 1, busy: 0 });
  t.deepEqual(timed, { success: 0, failure: 2, invalid_request: 1, busy: 0 });
  t.is(await gauge(app.url, 'service_builds_in_flight'), 0, 'capacity released after errors');
});

test('reuse off, burst of 10 with limit 3: exactly 3 run, 7 get 429 (Retry-After 30 without history, then the 5 s floor), slots free again afterwards', async (t) => {
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  let running = 0;
  let maxRunning = 0;
  const app = await startWithRunner(
    t,
    async () => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await gate;
      running -= 1;
      return RESULT;
    },
    { build: { ...testConfig({ scratchDir: '/x' }).build, maxConcurrent: 3, reuse: false } },
  );
  t.is(await gauge(app.url, 'service_builds_capacity'), 3);
  const body = { repository: REPO, image: { registry: 'registry.example.com' } };

  const burst = async (retryAfter: string) => {
    const pending = Array.from({ length: 10 }, () => post(app.url, body));
    // The refused ones answer while the admitted ones still run.
    const busy: Response[] = [];
    for (const p of pending) void p.then((res) => res.status === 429 && busy.push(res));
    await eventually(() => busy.length >= 7, { what: '7 refusals' });
    t.is(running, 3);
    t.is(await gauge(app.url, 'service_builds_in_flight'), 3);
    for (const res of busy) {
      t.is(res.headers.get('retry-after'), retryAfter);
      t.deepEqual(await res.json(), { error: 'already running 3 builds, the maximum; retry later' });
    }
    release();
    const statuses = (await Promise.all(pending)).map((r) => r.status).sort();
    t.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
  };

  // No build has finished yet: the default.
  await burst('30');
  t.is(await gauge(app.url, 'service_builds_in_flight'), 0);
  gate = new Promise<void>((resolve) => (release = resolve));
  // The first three took well under a second: the running ones are due now, the floor applies.
  await burst('5');
  t.is(maxRunning, 3);
  const { total, timed } = await buildMetrics(app.url);
  t.deepEqual(total, { success: 6, failure: 0, invalid_request: 0, busy: 14 });
  t.is(timed.busy, 0, 'a refused request is not a build');
  t.is(app.calls.length, 6);
});

/** An app whose builds all wait until `release()`, at most `maxConcurrent` at once, reuse off. */
async function gatedApp(t: ExecutionContext, maxConcurrent: number, maxQueued = 200) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const app = await startWithRunner(
    t,
    async () => {
      await gate;
      return RESULT;
    },
    { build: { ...testConfig({ scratchDir: '/x' }).build, maxConcurrent, maxQueued, reuse: false } },
  );
  return { app, release: () => release() };
}

test('reuse off, maxConcurrent 0: no limit', async (t) => {
  const { app, release } = await gatedApp(t, 0);
  const body = { repository: REPO, image: { registry: 'registry.example.com' } };
  const pending = Array.from({ length: 12 }, () => post(app.url, body));
  await eventually(() => app.calls.length >= 12, { what: '12 running jobs' });
  release();
  t.deepEqual(
    (await Promise.all(pending)).map((r) => r.status),
    Array.from({ length: 12 }, () => 200),
  );
  t.is(await gauge(app.url, 'service_builds_capacity'), 0);
});

test('an empty body is a shape-check 400; the service log says where the shape failed, never the body', async (t) => {
  const app = await startWithRunner(t, () => Promise.resolve(RESULT));
  const empty = await fetch(`${app.url}/build`, { method: 'POST' });
  t.is(empty.status, 400);
  t.regex(
    ((await empty.json()) as { error: string }).error,
    /^missing or invalid fields: repository \(required\); /,
  );

  const res = await post(app.url, {
    repository: REPO,
    gitCredentials: { username: 'u', token: 'tok-SECRET-9' },
    platforms: ['x'],
  });
  t.is(res.status, 400);
  const refused = app
    .logText()
    .split('\n')
    .filter((l) => l.includes('build request refused'));
  t.is(refused.length, 2);
  t.true(refused[1]?.includes('/platforms/0 must match pattern'));
  t.false(app.logText().includes('tok-SECRET-9'));
  t.is(app.calls.length, 0);
});

test('async POST beyond the limit waits in the queue, runs once a slot frees; a full queue is 429', async (t) => {
  const { app, release } = await gatedApp(t, 1, 1);
  const body = JSON.stringify({ repository: REPO, image: { registry: 'registry.example.com' } });
  const asyncPost = () =>
    fetch(`${app.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
      body,
    });
  const admitted = await asyncPost();
  t.is(admitted.status, 202);
  const waiting = await asyncPost();
  t.is(waiting.status, 202);
  const queued = (await waiting.json()) as { id: string; phase: string; queue?: unknown };
  t.is(queued.phase, 'queued');
  t.deepEqual(queued.queue, { position: 1, ahead: 0 });
  const listed = (await (await fetch(`${app.url}/builds?status=queued`)).json()) as {
    builds: { id: string }[];
  };
  t.deepEqual(
    listed.builds.map((b) => b.id),
    [queued.id],
  );
  const refused = await asyncPost();
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  t.deepEqual(await refused.json(), { error: '1 builds already wait for a slot, the maximum; retry later' });
  t.is(app.calls.length, 1);
  release();
  const { id } = (await admitted.json()) as { id: string };
  for (const each of [id, queued.id]) {
    const record = (await (await fetch(`${app.url}/builds/${each}?wait=30`)).json()) as { answer?: unknown };
    t.deepEqual(record.answer, { status: 200, body: RESULT });
  }
  t.is(app.calls.length, 2);
});
