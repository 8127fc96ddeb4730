/**
 * The service behind Debian's real nginx with `proxy_read_timeout 8s` (test/helpers/nginx.ts),
 * building a repository whose RUN step is silent for 25 s: async calls (curl, ibs) get their
 * answer and exactly one build; a sync call still gets the front's 504 at 8 s and the service
 * cancels the build of the client that went away; ibs on SIGINT cancels its build; and ibs gets
 * its answer while the replica answering its polls is restarted (two replicas on Redis).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { ibsBuildArgs, runIbs } from '../helpers/ibs-process.js';
import { scrapeMetrics } from '../helpers/metrics.js';
import { startFront, type Front, type FrontRoute } from '../helpers/nginx.js';
import { startRedis } from '../helpers/redis-process.js';
import {
  listBuilds,
  replicaEnv,
  restartReplica,
  startReplicas,
  stopReplicas,
  type Replica,
} from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

const run = promisify(execFile);
const FRONT_IDLE_SECONDS = 8;
const SILENT_SECONDS = 25;
const gitEnv = { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD };

/** A repository of the test's own whose RUN step prints a line, then is silent for 25 s. */
function silentRepo(t: ExecutionContext): string {
  const repo = ownDockerfileRepo(
    SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, uniqueName('front'), SILENT_SECONDS),
  );
  t.teardown(repo.remove);
  return repo.repository;
}

/** One service process (no Redis) behind its own nginx. */
async function serviceBehindFront(t: ExecutionContext): Promise<{ service: Replica; front: Front }> {
  const env = Object.fromEntries(
    Object.entries(replicaEnv(stack, '')).filter(([name]) => name !== 'REDIS_URL'),
  );
  const [service] = (await startReplicas(['single'], env)) as [Replica];
  t.teardown(() => stopReplicas([service]));
  const front = await startFront({ routes: [{ location: '/', upstreams: [service.url] }] });
  t.teardown(front.stop);
  return { service, front };
}

const buildBody = (repository: string, name: string): string =>
  JSON.stringify({
    repository,
    gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    image: { registry: stack.REGISTRY_ANON, name },
    buildOptions: { noCache: true },
  });

interface CurlAnswer {
  status: number;
  seconds: number;
  headers: string;
  body: string;
}

/** curl through the front: the body from a file (the token stays out of argv), headers as given. */
async function curl(t: ExecutionContext, url: string, headers: string[], body?: string): Promise<CurlAnswer> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-curl-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const args = [
    '-sS',
    '-o',
    join(dir, 'body'),
    '-D',
    join(dir, 'headers'),
    '-w',
    '%{http_code} %{time_total}',
  ];
  for (const header of headers) args.push('-H', header);
  if (body !== undefined) {
    writeFileSync(join(dir, 'request'), body, { mode: 0o600 });
    args.push('-H', 'content-type: application/json', '--data-binary', `@${join(dir, 'request')}`);
  }
  const { stdout } = await run('curl', [...args, url], { timeout: 120_000 });
  const [status = '0', seconds = '0'] = stdout.trim().split(' ');
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
  return { status: Number(status), seconds: Number(seconds), headers: read('headers'), body: read('body') };
}

/** The sum of service_builds_total over its labels: every build the service counted. */
async function buildsCounted(url: string): Promise<number> {
  const metrics = await scrapeMetrics(url);
  return metrics.samples.filter((s) => s.name === 'service_builds_total').reduce((n, s) => n + s.value, 0);
}

test('curl with Prefer: respond-async through nginx: 202 in under a second, long polls get the answer, one build', async (t) => {
  const { service, front } = await serviceBehindFront(t);
  const requestId = `front-async-${randomBytes(4).toString('hex')}`;
  const name = uniqueName('front-async');
  const posted = await curl(
    t,
    `${front.url}/build`,
    ['Prefer: respond-async', `X-Request-Id: ${requestId}`],
    buildBody(silentRepo(t), name),
  );
  t.is(posted.status, 202, posted.body);
  t.true(posted.seconds < 1, `202 after ${posted.seconds} s`);
  t.regex(posted.headers, /^preference-applied: respond-async\r?$/im);
  const location = /^location: (\/builds\/bld-[0-9a-f-]+)\r?$/im.exec(posted.headers)?.[1];
  t.truthy(location, posted.headers);
  const record = JSON.parse(posted.body) as BuildRecord;
  t.is(location, `/builds/${record.id}`);

  // Long polls shorter than the front's read timeout, until the answer comes.
  const polls: CurlAnswer[] = [];
  const answer = await eventually(
    async () => {
      const poll = await curl(t, `${front.url}${location}?wait=${FRONT_IDLE_SECONDS - 3}`, []);
      polls.push(poll);
      t.is(poll.status, 200, poll.body);
      return (JSON.parse(poll.body) as { answer?: { status: number; body: Record<string, unknown> } }).answer;
    },
    { timeout: 600_000, interval: 0, what: `the answer of ${location}` },
  );
  t.is(answer?.status, 200, JSON.stringify(answer));
  t.regex(String(answer?.body.digest), /^sha256:[0-9a-f]{64}$/);
  t.is(answer?.body.name, name);
  t.true(polls.length >= 3, `${polls.length} polls over a build with a ${SILENT_SECONDS} s silent step`);
  t.false(front.accessLog().includes(' 504 '), front.accessLog());

  // Exactly one build ran.
  t.is((await listBuilds(service, `requestId=${requestId}`)).length, 1);
  t.is((await listBuilds(service, '')).length, 1);
  t.is(await buildsCounted(service.url), 1);
});

test('a sync POST /build through the same front fails at 8 s; the service cancels the build of the client that went away', async (t) => {
  const { service, front } = await serviceBehindFront(t);
  const requestId = `front-sync-${randomBytes(4).toString('hex')}`;
  const posted = await curl(
    t,
    `${front.url}/build`,
    [`X-Request-Id: ${requestId}`],
    buildBody(silentRepo(t), uniqueName('front-sync')),
  );
  t.is(posted.status, 504, posted.body);
  t.true(
    posted.seconds >= FRONT_IDLE_SECONDS - 0.5 && posted.seconds < FRONT_IDLE_SECONDS * 3,
    `504 after ${posted.seconds} s`,
  );
  t.regex(front.errorLog(), /upstream timed out .* request: "POST \/build HTTP\/1\.1"/);
  // The service names the request whose client went away, and its build ends cancelled.
  const gone = await eventually(
    () =>
      service.service
        .lines()
        .find((l) => l.requestId === requestId && JSON.stringify(l).includes('client went away')),
    { timeout: 60_000, interval: 100, what: `a log line of ${requestId} saying its client went away` },
  );
  t.log(JSON.stringify(gone));
  const [record] = await eventually(
    async () => {
      const builds = await listBuilds(service, `requestId=${requestId}`);
      return builds[0]?.phase === 'finished' ? builds : undefined;
    },
    { timeout: 60_000, interval: 200, what: 'the cancelled build to finish' },
  );
  t.is(record?.status, 'failure');
  t.regex(String(record?.error), /client went away/);
});

test('ibs build through nginx: exit 0, the answer on stdout, the RUN line live on stderr, one build', async (t) => {
  const { service, front } = await serviceBehindFront(t);
  const requestId = `front-ibs-${randomBytes(4).toString('hex')}`;
  const name = uniqueName('front-ibs');
  const ibs = runIbs(
    ibsBuildArgs(
      { server: front.url, repository: silentRepo(t), registry: stack.REGISTRY_ANON, name },
      '--no-cache',
      '--request-id',
      requestId,
    ),
    gitEnv,
  );
  const printed = await ibs.stderrAt(SLOW_STEP_STARTED, 600_000);
  t.is(await ibs.exited, 0, ibs.stderr());
  const exitedAfter = Date.now() - printed;
  t.true(exitedAfter > (SILENT_SECONDS - 5) * 1000, `the RUN line came ${exitedAfter} ms before the end`);
  t.regex(ibs.stderr(), new RegExp(`^\\[build\\] .*${SLOW_STEP_STARTED}`, 'm'));
  t.regex(ibs.stderr(), /^==> accepted: build bld-/m);
  const lines = ibs.stdout().split('\n').filter(Boolean);
  t.is(lines.length, 1, ibs.stdout());
  const answer = JSON.parse(lines[0] ?? '{}') as Record<string, string>;
  t.is(answer.name, name);
  t.regex(answer.digest ?? '', /^sha256:[0-9a-f]{64}$/);
  t.false(ibs.stderr().includes(stack.GIT_HTTPS_PASSWORD));

  const builds = await listBuilds(service, '');
  t.is(builds.length, 1, 'exactly one build ran');
  t.like(builds[0], { requestId, status: 'success' });
  t.is(await buildsCounted(service.url), 1);
});

test('ibs on SIGINT through nginx: DELETE cancels its build (its record ends failure), exit 130', async (t) => {
  const { service, front } = await serviceBehindFront(t);
  const name = uniqueName('front-int');
  const ibs = runIbs(
    ibsBuildArgs(
      { server: front.url, repository: silentRepo(t), registry: stack.REGISTRY_ANON, name },
      '--no-cache',
    ),
    gitEnv,
  );
  await ibs.stderrAt(SLOW_STEP_STARTED, 600_000);
  const id = /^==> accepted: build (bld-[0-9a-f-]+)$/m.exec(ibs.stderr())?.[1];
  if (id === undefined) return t.fail(`no build id in ${ibs.stderr()}`);
  ibs.child.kill('SIGINT');
  t.is(await ibs.exited, 130, ibs.stderr());
  t.regex(ibs.stderr(), new RegExp(`^==> cancelled build ${id}$`, 'm'));
  const record = await eventually(
    async () => {
      const [found] = await listBuilds(service, '');
      return found?.phase === 'finished' ? found : undefined;
    },
    { timeout: 30_000, interval: 200, what: 'the cancelled build to finish' },
  );
  t.is(record.id, id);
  t.is(record.status, 'failure');
});

test('ibs through nginx in front of two replicas (Redis): the replica answering its polls restarts mid-build', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.dispose());
  const env = replicaEnv(stack, redis.url);
  const [a, b] = (await startReplicas(['A', 'B'], env)) as [Replica, Replica];
  let restarted: Replica = b;
  t.teardown(() => stopReplicas([a, restarted]));
  // POST /build goes to A (which runs the build); every poll and log stream to B.
  const routes: FrontRoute[] = [
    { location: '= /build', upstreams: [a.url] },
    { location: '/', upstreams: [b.url] },
  ];
  const front = await startFront({ routes });
  t.teardown(front.stop);
  const requestId = `front-restart-${randomBytes(4).toString('hex')}`;
  const name = uniqueName('front-restart');
  const ibs = runIbs(
    ibsBuildArgs(
      { server: front.url, repository: silentRepo(t), registry: stack.REGISTRY_ANON, name },
      '--no-cache',
      '--request-id',
      requestId,
    ),
    gitEnv,
  );
  await ibs.stderrAt(SLOW_STEP_STARTED, 600_000);
  restarted = await restartReplica(b, env);
  t.is(await ibs.exited, 0, ibs.stderr());
  t.regex(ibs.stdout(), /"digest":"sha256:[0-9a-f]{64}"/);
  t.regex(front.accessLog(), /^502 GET \/builds\/bld-[^ ]+\?wait=\d+ /m, 'polls met the restart');
  const builds = await listBuilds(a, `requestId=${requestId}`);
  t.is(builds.length, 1, 'exactly one build ran');
  t.like(builds[0], { status: 'success' });
});
