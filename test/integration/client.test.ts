/**
 * `ibs build` against the real service and the real stack (git over https, the Dev Containers
 * CLI, BuildKit, a registry): the slow build followed live, the wait in the queue, the 429 of a
 * full queue, every exit code, GITHUB_OUTPUT, Ctrl-C freeing the slot, and the git token nowhere
 * in ibs's output or any argv.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { RunningApp } from '../helpers/app.js';
import {
  httpsRepo,
  readPushedImage,
  servedRepo,
  stack,
  startBuildAppFor,
  uniqueName,
  type BuildOverrides,
  ownDockerfileRepo,
} from '../helpers/build-support.js';
import { ibsBuildArgs, runIbs } from '../helpers/ibs-process.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { watchCommandLines } from '../helpers/processes.js';
import { freePort } from '../stack/proc.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_SECONDS, SLOW_STEP_STARTED } from '../stack/fixtures.js';

/** A copy of the slow fixture whose step no concurrent build shares (BuildKit merges those). */
function ownSlowRepo(t: ExecutionContext): string {
  const repo = ownDockerfileRepo(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, uniqueName('slow')));
  t.teardown(repo.remove);
  return repo.repository;
}

const gitEnv = { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD };

async function app(t: { teardown: (fn: () => Promise<void>) => void }, overrides: BuildOverrides = {}) {
  const running = await startBuildAppFor(t, overrides);
  return { app: running, logs: join(running.ctx.config.scratchDir, 'logs') };
}

const buildArgs = (a: RunningApp, repo: string, name: string, ...more: string[]): string[] =>
  ibsBuildArgs({ server: a.url, repository: repo, registry: stack.REGISTRY_ANON, name }, ...more);

/** When `needle` first shows in a stored img log (the service's copy of what the step printed). */
async function storedAt(logs: string, needle: string, ms = 240_000): Promise<number> {
  const holds = async (): Promise<boolean> => {
    for (const name of (await readdir(logs).catch(() => [] as string[])).filter((n) =>
      n.startsWith('img-'),
    )) {
      if ((await readFile(join(logs, name), 'utf8').catch(() => '')).includes(needle)) return true;
    }
    return false;
  };
  return eventually(async () => (await holds()) && Date.now(), {
    timeout: ms,
    interval: 50,
    what: `a stored log holding ${needle}`,
  });
}

const inFlight = (url: string): Promise<number> => metricValue(url, 'service_builds_in_flight');

test.serial(
  'a slow build: its RUN line on stderr while the step runs, the answer on stdout and in GITHUB_OUTPUT, the token nowhere',
  async (t) => {
    const { app: a, logs } = await app(t);
    const outDir = mkdtempSync(join(tmpdir(), 'ibs-gho-'));
    t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
    const githubOutput = join(outDir, 'github-output');
    writeFileSync(githubOutput, 'earlier=kept\n');
    t.true(stack.GIT_HTTPS_PASSWORD.length >= 16, 'the canary is a generated token');
    const argv = watchCommandLines(stack.GIT_HTTPS_PASSWORD);
    const name = uniqueName('client-slow');
    const ibs = runIbs(buildArgs(a, ownSlowRepo(t), name, '--no-cache'), {
      ...gitEnv,
      GITHUB_OUTPUT: githubOutput,
    });

    const [stored, printed] = await Promise.all([
      storedAt(logs, SLOW_STEP_STARTED),
      ibs.stderrAt(SLOW_STEP_STARTED),
    ]);
    // Followed live: the line reached ibs well before the step's sleep ended (a loaded machine
    // delays it by seconds, never by half the step).
    t.true(
      printed - stored < (SLOW_STEP_SECONDS * 1000) / 2,
      `printed ${printed - stored} ms after the step printed it`,
    );
    t.log(`the RUN line reached ibs's stderr ${printed - stored} ms after the service stored it`);
    t.regex(ibs.stderr(), new RegExp(`^\\[build\\] .*${SLOW_STEP_STARTED}`, 'm'), 'prefixed with its step');
    t.regex(ibs.stderr(), /^==> cloning$/m, 'a heading per phase');
    t.regex(ibs.stderr(), /^\[clone\] /m);
    t.is(ibs.stdout(), '', 'no answer yet');
    t.is(await ibs.exited, 0, ibs.stderr());
    const answeredAfter = Date.now() - printed;
    t.true(answeredAfter > 20_000, `the answer came ${answeredAfter} ms after the RUN line`);
    const seenInArgv = argv.stop();

    const lines = ibs.stdout().split('\n').filter(Boolean);
    t.is(lines.length, 1, 'stdout is the answer only');
    const answer = JSON.parse(lines[0] ?? '{}') as Record<string, string>;
    t.is(answer.registry, stack.REGISTRY_ANON);
    t.is(answer.name, name);
    t.is(answer.image, `${answer.registry}/${name}:${answer.tag}`);
    t.is(
      answer.digest,
      (await readPushedImage(answer.registry ?? '', name, answer.tag ?? '')).digest,
      'the pushed digest',
    );
    const builds = (await (await fetch(`${a.url}/builds?status=success`)).json()) as {
      builds: { imageBuildLogId: string }[];
    };
    t.is(builds.builds[0]?.imageBuildLogId, answer.imageBuildLogId, "the service's answer");
    t.true(ibs.stderr().includes(`${SLOW_STEP_STARTED}`) && ibs.stderr().includes('slow step done'));

    const keys = ['image', 'registry', 'name', 'tag', 'commit', 'digest'];
    t.is(
      readFileSync(githubOutput, 'utf8'),
      `earlier=kept\n${keys.map((k) => `${k}=${answer[k]}\n`).join('')}`,
    );

    // The token went to the service in the body only: not in ibs's output, not in any argv.
    t.false(ibs.stdout().includes(stack.GIT_HTTPS_PASSWORD));
    t.false(ibs.stderr().includes(stack.GIT_HTTPS_PASSWORD));
    t.false(readFileSync(githubOutput, 'utf8').includes(stack.GIT_HTTPS_PASSWORD));
    t.deepEqual(seenInArgv, [], 'no process had the token in its argv');
  },
);

test.serial(
  '--max-concurrent-builds 1: two ibs builds started together both succeed, the second queued with its position',
  async (t) => {
    const { app: a } = await app(t, { build: { maxConcurrent: 1 } });
    const first = runIbs(buildArgs(a, httpsRepo('image'), uniqueName('client-one')), gitEnv);
    const second = runIbs(buildArgs(a, httpsRepo('feature'), uniqueName('client-two')), gitEnv);
    t.deepEqual(await Promise.all([first.exited, second.exited]), [0, 0], first.stderr() + second.stderr());
    const waited = [first, second].filter((p) => p.stderr().includes('queued: position'));
    t.is(waited.length, 1, 'one of them waited in the queue');
    const [queued] = waited;
    if (queued === undefined) return;
    t.regex(queued.stderr(), /^queued: position 1$/m);
    t.false(queued.stderr().includes('busy (429)'), 'an async build waits in the queue, never refused');
    t.is(queued.stderr().split('==> POST').length - 1, 1, 'it posted once');
    for (const p of [first, second]) t.regex(p.stdout(), /"digest":"sha256:[0-9a-f]{64}"/);
  },
);

test.serial('exit 1: a failing build, with its error and the tail of its log', async (t) => {
  const { app: a } = await app(t);
  const repo = servedRepo((dir) => {
    mkdirSync(join(dir, '.devcontainer'));
    writeFileSync(join(dir, '.devcontainer', 'devcontainer.json'), '{"build": {"dockerfile": "Dockerfile"}}');
    writeFileSync(
      join(dir, '.devcontainer', 'Dockerfile'),
      `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo "about to fail" && exit 3\n`,
    );
  });
  t.teardown(repo.remove);
  const ibs = runIbs(buildArgs(a, httpsRepo(repo.name), uniqueName('client-fail'), '--json'), gitEnv);
  t.is(await ibs.exited, 1, ibs.stderr());
  const err = ibs.stderr();
  t.regex(err, /ibs: the build failed \(500\): .*exited with code/);
  const tail = err.slice(err.lastIndexOf('==> the last'));
  t.regex(tail, /^==> the last \d+ lines of img-/);
  t.true(tail.includes('about to fail'), tail);
  const doc = JSON.parse(ibs.stdout()) as Record<string, unknown>;
  t.is(doc.exitCode, 1);
  t.regex(String(doc.logId), /^img-/);
});

test.serial('exit 2: a bad repository URL is refused with its error', async (t) => {
  const { app: a } = await app(t);
  const ibs = runIbs(buildArgs(a, 'not a url', uniqueName('client-bad')));
  t.is(await ibs.exited, 2);
  t.regex(ibs.stderr(), /the request was refused \(400\): unable to parse git repository URL/);
  t.is(ibs.stdout(), '');
});

test.serial('exit 4: nothing listening', async (t) => {
  const port = await freePort();
  const ibs = runIbs(['build', '--server', `http://127.0.0.1:${port}`, '--repository', httpsRepo('image')]);
  t.is(await ibs.exited, 4);
  t.regex(ibs.stderr(), /the server could not be reached: ECONNREFUSED/);
});

test.serial(
  'exit 3 while the slot is taken and the queue full past --timeout; Ctrl-C then exits 130, cancels the build and frees the slot',
  async (t) => {
    // No room to queue: an async build is refused with 429, as every build is when the queue is full.
    const { app: a, logs } = await app(t, { build: { maxConcurrent: 1, maxQueued: 0 } });
    const slow = runIbs(buildArgs(a, ownSlowRepo(t), uniqueName('client-int'), '--no-cache'), gitEnv);
    await slow.stderrAt(SLOW_STEP_STARTED);
    t.is(await inFlight(a.url), 1);

    const busy = runIbs(
      buildArgs(a, httpsRepo('image'), uniqueName('client-busy'), '--timeout', '3'),
      gitEnv,
    );
    t.is(await busy.exited, 3, busy.stderr());
    t.regex(busy.stderr(), /still busy \(429, Retry-After \d+ s\) and --timeout runs out first/);

    slow.child.kill('SIGINT');
    const interruptedAt = Date.now();
    t.is(await slow.exited, 130);
    t.regex(slow.stderr(), /^ibs: interrupted$/m);
    // The build was cancelled (its log says so), not left to end: that is what freed the slot.
    await storedAt(logs, 'cancelled by', 60_000);
    await eventually(async () => (await inFlight(a.url)) === 0, { timeout: 60_000, what: 'the slot freed' });
    t.log(`slot freed ${Date.now() - interruptedAt} ms after SIGINT`);
  },
);
