/**
 * The builder fleet against the stack's two real BuildKits (docs/fleet.md): mutual TLS, placement
 * by repository (each builder's cache is its own), failover when a builder's bridge stops, a
 * builder lost mid-build (the build moves), and bounded load. Bridges a test stops are its own
 * (privateBuilderBridge).
 */
import { readFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { placementKey, placementOrder } from '../../workers/builder/fleet/placement.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { eventually } from '../helpers/eventually.js';
import { sampleValue, scrapeMetrics } from '../helpers/metrics.js';
import { watchCommandLines } from '../helpers/processes.js';
import { SLOW_STEP_STARTED } from '../stack/fixtures.js';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  httpsRepo,
  postBuild,
  ownDockerfileRepo,
  stack,
  privateBridges,
  STACK_BUILDER_TLS,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';

async function recordsOf(app: RunningApp, query: string): Promise<BuildRecord[]> {
  return ((await (await fetch(`${app.url}/builds?${query}`)).json()) as { builds: BuildRecord[] }).builds;
}

const requestBody = (repository: string, extra: Record<string, unknown> = {}) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name: uniqueName('fleet') },
  ...extra,
});

async function builderUp(app: RunningApp, endpoint: string): Promise<number | undefined> {
  return sampleValue(await scrapeMetrics(app.url), 'service_builder_up', { builder: endpoint });
}

/** The builder GET /builds names for the build answered with `body` (found by its image log). */
async function builderOf(app: RunningApp, repository: string, logId: unknown): Promise<string | undefined> {
  const records = await recordsOf(app, `repository=${encodeURIComponent(repository)}`);
  return records.find((r) => r.imageBuildLogId === logId)?.builder;
}

test('mutual TLS: a build through a TLS-only endpoint answers 200; the key appears nowhere', async (t) => {
  // Redis mode, so the build record and its logs in Redis are searched too.
  const service = await startBuildAppFor(t, {
    builderEndpoints: [stack.BUILDER_A_TLS_ENDPOINT],
    builderTls: STACK_BUILDER_TLS,
    redis: { url: stack.STACK_REDIS_URL },
  });
  const key = readFileSync(STACK_BUILDER_TLS.keyPath, 'utf8');
  const canary = key.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))[0] ?? 'none';
  const sampler = watchCommandLines();
  const res = await postBuild(service, requestBody(httpsRepo('image')));
  const argv = sampler.stop();
  t.is(res.status, 200, JSON.stringify(res.body));
  const img = await fetchLog(service, res.body.imageBuildLogId);
  t.true(
    img.text.includes(`--driver-opt key=${STACK_BUILDER_TLS.keyPath}`),
    'the key goes to buildx as a path',
  );
  t.true(
    argv.some((a) => a.includes('buildx')),
    'argv was sampled during the build',
  );
  const config = await (await fetch(`${service.url}/config`)).text();
  t.like(JSON.parse(config), { builderTls: { ca: true, clientCertificate: true, serverName: 'localhost' } });
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  const git = await fetchLog(service, res.body.gitCloneLogId);
  for (const [where, text] of Object.entries({
    argv: argv.join('\n'),
    img: img.text,
    git: git.text,
    config,
    metrics,
    builds: await (await fetch(`${service.url}/builds`)).text(),
    'service log': service.logText(),
    redis: await dumpRedis(stack.STACK_REDIS_URL),
  })) {
    t.false(text.includes(canary), `key material in ${where}`);
  }
});

for (const [label, tls] of [
  [
    'without a client certificate',
    { caPath: STACK_BUILDER_TLS.caPath, serverName: STACK_BUILDER_TLS.serverName },
  ],
  [
    "with another CA's client certificate",
    {
      ...STACK_BUILDER_TLS,
      certPath: stack.BUILDER_TLS_OTHER_CA_CLIENT_CERT_FILE,
      keyPath: stack.BUILDER_TLS_OTHER_CA_CLIENT_KEY_FILE,
    },
  ],
] as const) {
  test(`mutual TLS ${label}: 500 with the img log naming the handshake failure`, async (t) => {
    const service = await startBuildAppFor(t, {
      builderEndpoints: [stack.BUILDER_A_TLS_ENDPOINT],
      builderTls: tls,
    });
    const res = await postBuild(service, requestBody(httpsRepo('image')));
    t.is(res.status, 500, JSON.stringify(res.body));
    t.regex(String(res.body.logId), /^img-/);
    const log = await fetchLog(service, res.body.logId);
    t.regex(log.text, /builder tcp:\/\/\S+ unreachable: TLS handshake failed/);
  });
}

/** Repositories of their own (a Dockerfile with a RUN step of their own), two placed on each builder. */
function placedRepos(t: ExecutionContext, endpoints: readonly string[]): { name: string; home: string }[] {
  const repos: { name: string; home: string }[] = [];
  const per = new Map<string, number>();
  for (let i = 0; repos.length < 4 && i < 100; i += 1) {
    const repo = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${i}-${Date.now()} > /fleet\n`);
    const home = placementOrder(placementKey(repo.repository, undefined), endpoints)[0] ?? '';
    if ((per.get(home) ?? 0) >= 2) {
      repo.remove();
      continue;
    }
    t.teardown(repo.remove);
    per.set(home, (per.get(home) ?? 0) + 1);
    repos.push({ name: repo.name, home });
  }
  return repos;
}

test('placement: each repository built twice lands on one builder, the second from its cache; both builders build', async (t) => {
  const endpoints = [stack.BUILDER_A_ENDPOINT, stack.BUILDER_B_ENDPOINT];
  const service = await startBuildAppFor(t, { builderEndpoints: endpoints });
  const used = new Set<string>();
  for (const repo of placedRepos(t, endpoints)) {
    const repository = httpsRepo(repo.name);
    const first = await postBuild(service, requestBody(repository));
    const second = await postBuild(service, requestBody(repository));
    t.is(first.status, 200, JSON.stringify(first.body));
    t.is(second.status, 200, JSON.stringify(second.body));
    const builders = [
      await builderOf(service, repository, first.body.imageBuildLogId),
      await builderOf(service, repository, second.body.imageBuildLogId),
    ];
    t.deepEqual(builders, [repo.home, repo.home], repository);
    used.add(repo.home);
    const log = await fetchLog(service, second.body.imageBuildLogId);
    t.regex(log.text, /RUN echo .* > \/fleet[\s\S]*?CACHED|CACHED[\s\S]*RUN echo/, 'the RUN step is CACHED');
  }
  t.deepEqual([...used].sort(), [...endpoints].sort());
});

/**
 * A service on two private bridges, and where `fixture`'s repository goes: its home builder, the
 * other, and the bridge in front of the home one (for a test to stop).
 */
async function placedOnTwo(t: ExecutionContext, fixture: string) {
  const [a, b] = await privateBridges(t);
  const endpoints = [a.endpoint, b.endpoint];
  const service = await startBuildAppFor(t, { builderEndpoints: endpoints });
  const repository = httpsRepo(fixture);
  const [home, other] = placementOrder(placementKey(repository, undefined), endpoints) as [string, string];
  return { a, b, service, repository, home, other, homeBridge: home === a.endpoint ? a : b };
}

test('failover: a builder stopped while idle is seen down, its repositories build elsewhere; seen up once back', async (t) => {
  const { a, b, service, repository, home, other, homeBridge } = await placedOnTwo(t, 'image');
  await homeBridge.stop();
  await eventually(async () => ((await builderUp(service, home)) === 0 ? true : undefined), {
    timeout: 60_000,
    interval: 200,
    what: 'builder down',
  });
  const ready = await fetch(`${service.url}/health/ready`);
  t.is(ready.status, 200);
  t.like(await ready.json(), { builders: [{ builder: a.endpoint }, { builder: b.endpoint }] });
  const res = await postBuild(service, requestBody(repository));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(await builderOf(service, repository, res.body.imageBuildLogId), other);
  await homeBridge.start();
  await eventually(async () => ((await builderUp(service, home)) === 1 ? true : undefined), {
    timeout: 60_000,
    interval: 200,
    what: 'builder up',
  });
  const back = await postBuild(service, requestBody(repository));
  t.is(back.status, 200, JSON.stringify(back.body));
  t.is(await builderOf(service, repository, back.body.imageBuildLogId), home);
});

/** Starts a slow build; resolves its answer later. */
function slowBuild(service: RunningApp, signal?: AbortSignal) {
  return fetch(`${service.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(requestBody(httpsRepo('slow'), { buildOptions: { noCache: true } })),
    ...(signal === undefined ? {} : { signal }),
  }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
  }));
}

/** The running build's record, once its img log shows the slow step started. */
function slowStepRunning(service: RunningApp): Promise<BuildRecord> {
  return eventually(
    async () => {
      const [record] = await recordsOf(service, 'status=running');
      if (record?.imageBuildLogId === undefined) return undefined;
      return (await fetchLog(service, record.imageBuildLogId)).text.includes(SLOW_STEP_STARTED)
        ? record
        : undefined;
    },
    { timeout: 180_000, interval: 200, what: 'the slow step runs' },
  );
}

test('a builder lost mid-build: the build runs again on the other builder and answers 200, its img log naming both', async (t) => {
  const { service, home, other, homeBridge } = await placedOnTwo(t, 'slow');
  const answer = slowBuild(service);
  const running = await slowStepRunning(service);
  t.is(running.builder, home);
  await homeBridge.stop();
  const moved = await answer;
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(moved.body.imageBuildLogId, running.imageBuildLogId);
  const log = (await fetchLog(service, running.imageBuildLogId ?? '')).text;
  t.true(log.includes(`# builder ${home} unreachable (`), log.slice(-2000));
  t.true(log.includes(`: building on ${other} instead`), log.slice(-2000));
  const record = (await (await fetch(`${service.url}/builds/${running.id}`)).json()) as BuildRecord;
  t.is(record.builder, other);
});

test('bounded load: one build per builder, three slow builds at once: two on different builders, the third 429', async (t) => {
  const [a, b] = await privateBridges(t);
  const service = await startBuildAppFor(t, {
    builderEndpoints: [a.endpoint, b.endpoint],
    build: { maxPerBuilder: 1 },
  });
  const client = new AbortController();
  t.teardown(() => client.abort());
  const first = slowBuild(service, client.signal).catch(() => undefined);
  const second = slowBuild(service, client.signal).catch(() => undefined);
  const placed = await eventually(
    async () => {
      const records = await recordsOf(service, 'status=running');
      return records.length === 2 ? records : undefined;
    },
    { timeout: 60_000, interval: 200, what: 'two builds placed' },
  );
  t.deepEqual(placed.map((r) => r.builder).sort(), [a.endpoint, b.endpoint].sort());
  const third = await postBuild(service, requestBody(httpsRepo('slow'), { buildOptions: { noCache: true } }));
  t.is(third.status, 429, JSON.stringify(third.body));
  t.regex(third.headers.get('retry-after') ?? '', /^\d+$/);
  t.regex(String(third.body.error), /every builder that answers already runs 1 builds/);
  client.abort();
  await Promise.all([first, second]);
});
