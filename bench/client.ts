/**
 * Benchmark (not a test), three comparisons in one run, each side interleaved with the other:
 * 1. async against sync end to end for a warm build (reuse off, builder cache warm): one POST,
 *    against POST `Prefer: respond-async` then long polls until the answer (same client code);
 * 2. `ibs build` (the bundled bin, and the unbundled modules) against `curl` for a reuse answer,
 *    processes timed spawn to exit, with `node -e 0` (the runtime's own start);
 * 3. the long poll's wake-up across replicas (Redis): a build answered on A, its poll on B.
 *
 *   npm run stack -- up
 *   npm run bench:client [-- runs=15 fixture=feature]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, testConfig, type RunningApp } from '../test/helpers/app.js';
import { startRedis } from '../test/helpers/redis-process.js';
import { replicaEnv, startReplicas, stopReplicas } from '../test/helpers/replicas.js';
import { eventually } from '../test/helpers/eventually.js';
import { ibsBuildArgs } from '../test/helpers/ibs-process.js';
import { stackEnv } from '../test/stack/env.js';

const arg = (name: string, fallback: string): string =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`${name}=`))
    ?.slice(name.length + 1) ?? fallback;
const runs = Number(arg('runs', '15'));
const fixture = arg('fixture', 'feature');
const stack = stackEnv();
const basePath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
const scratch = await mkdtemp(join(tmpdir(), 'ibs-bench-client-'));
const repository = `${stack.GIT_HTTPS_URL}/${fixture}.git`;
const name = `bench/client-${fixture}`;
const body = JSON.stringify({
  repository,
  gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
  image: { registry: stack.REGISTRY_ANON, name },
});
// curl reads the body from a file (the token stays out of its argv, as ibs keeps it out of its own).
const bodyFile = join(scratch, 'body.json');
await writeFile(bodyFile, body, { mode: 0o600 });

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(' ');
const line = (label: string, xs: number[]): void =>
  console.log(`  ${label.padEnd(22)} median ${median(xs).toFixed(0).padStart(5)} ms   (${fmt(xs)})`);
const ratio = (a: number[], b: number[], target: string): void => {
  const [ma, mb] = [median(a), median(b)];
  console.log(
    `  ratio ${(ma / mb).toFixed(3)}, +${(ma - mb).toFixed(0)} ms (${(((ma - mb) / mb) * 100).toFixed(1)} %; ${target})`,
  );
};

const startWith = (reuse: boolean): Promise<RunningApp> =>
  startApp({
    scratchDir: scratch,
    builderEndpoints: [stack.STACK_BUILDER_ENDPOINT],
    insecureRegistries: [stack.REGISTRY_ANON],
    childEnv: { PATH: basePath, GIT_SSL_CAINFO: stack.GIT_CA_FILE },
    logs: { retention: 1000 },
    build: { ...testConfig({ scratchDir: scratch }).build, reuse },
  });

/** One POST /build (async: with Prefer: respond-async); its 202 body, or the sync answer. */
async function post(url: string, async: boolean): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (async) headers.prefer = 'respond-async';
  const res = await fetch(`${url}/build`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Long polls of GET /builds/{id}?wait= on `url` until the record carries its answer. */
async function awaitAnswer(
  url: string,
  id: string,
  wait = 25,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return eventually(
    async () => {
      const res = await fetch(`${url}/builds/${id}?wait=${wait}`);
      const record = (await res.json()) as { answer?: { status: number; body: Record<string, unknown> } };
      if (res.status !== 200) throw new Error(`GET /builds/${id} answered ${res.status}`);
      return record.answer;
    },
    { timeout: 600_000, interval: 0, what: `the answer of ${id}` },
  );
}

/** Sync or async, end to end: the answer's wall milliseconds (a non-200 answer throws). */
async function endToEnd(url: string, async: boolean): Promise<number> {
  const started = performance.now();
  const posted = await post(url, async);
  const answer = posted.status === 202 ? await awaitAnswer(url, String(posted.body.id)) : posted;
  if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return performance.now() - started;
}

async function asyncAgainstSync(): Promise<void> {
  const app = await startWith(false);
  try {
    await endToEnd(app.url, false); // warms the builder's cache
    await endToEnd(app.url, true);
    const times = { sync: [] as number[], async: [] as number[] };
    for (let i = 0; i < runs; i++) {
      for (const side of i % 2 === 0 ? (['sync', 'async'] as const) : (['async', 'sync'] as const))
        times[side].push(await endToEnd(app.url, side === 'async'));
    }
    console.log(`1. warm build (reuse off, cache warm), fixture ${fixture}, ${runs} runs each, interleaved`);
    line('sync POST', times.sync);
    line('async POST + polls', times.async);
    ratio(times.async, times.sync, 'target: async adds under 5 %');
  } finally {
    await app.close();
  }
}

/** Runs a process to its end: wall milliseconds (a non-zero exit throws). */
function timed(cmd: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env: { PATH: basePath, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${cmd} exited ${code}: ${err.slice(-2000)}`)),
    );
  });
}

const SIDES = {
  curl: (url: string) =>
    timed('curl', [
      '-sS',
      '--fail-with-body',
      '-H',
      'content-type: application/json',
      '--data-binary',
      `@${bodyFile}`,
      `${url}/build`,
    ]),
  'ibs (bundled bin)': (url: string) => ibs('dist/ibs.js', url),
  'ibs (modules)': (url: string) => ibs('dist/src/client/main.js', url),
  'node -e 0': () => timed(process.execPath, ['-e', '0']),
};
type Side = keyof typeof SIDES;

function ibs(file: string, url: string): Promise<number> {
  const args = [file, ...ibsBuildArgs({ server: url, repository, registry: stack.REGISTRY_ANON, name })];
  return timed(process.execPath, args, {
    IBS_GIT_USERNAME: stack.GIT_HTTPS_USER,
    IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD,
  });
}

async function ibsAgainstCurl(): Promise<void> {
  const app = await startWith(true);
  try {
    const sides = Object.keys(SIDES) as Side[];
    for (const side of sides) await SIDES[side](app.url); // the first builds, then warm-ups
    const times = Object.fromEntries(sides.map((s) => [s, [] as number[]])) as Record<Side, number[]>;
    for (let i = 0; i < runs; i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse())
        times[side].push(await SIDES[side](app.url));
    }
    console.log(`2. reuse answer (reuse on), fixture ${fixture}, ${runs} runs each, interleaved`);
    for (const side of sides) line(side, times[side]);
    ratio(times['ibs (bundled bin)'], times.curl, 'target: ibs adds under 100 ms');
    ratio(times['ibs (modules)'], times.curl, 'the same without the bundle');
  } finally {
    await app.close();
  }
}

/** A build answered on A (reuse), its long poll held on B: B's wake-up after A's own poll woke. */
async function wakeUpAcrossReplicas(): Promise<void> {
  const redis = await startRedis();
  const replicas = await startReplicas(['A', 'B'], replicaEnv(stack, redis.url));
  const [a, b] = replicas as [(typeof replicas)[number], (typeof replicas)[number]];
  try {
    await endToEnd(a.url, false); // the first builds: the rest are reuses
    const lags: number[] = [];
    let unheld = 0;
    for (let i = 0; i < runs + 1; i++) {
      const posted = await post(a.url, true);
      const id = String(posted.body.id);
      const polled = performance.now();
      const wake = (url: string) => awaitAnswer(url, id, 60).then(() => performance.now());
      const [onA, onB] = await Promise.all([wake(a.url), wake(b.url)]);
      // Only polls that were held count: a build answered before the poll arrived wakes nothing.
      if (i > 0 && onA - polled > 50) lags.push(onB - onA);
      else if (i > 0) unheld++;
    }
    console.log(
      `3. long poll wake-up across replicas (Redis): build on A, poll on B, ${lags.length} held polls (${unheld} answered at once)`,
    );
    console.log(
      `  B woke after A: median ${median(lags).toFixed(1)} ms (${lags.map((x) => x.toFixed(1)).join(' ')}); target under 100 ms`,
    );
  } finally {
    await stopReplicas(replicas);
    await redis.dispose();
  }
}

try {
  await asyncAgainstSync();
  await ibsAgainstCurl();
  await wakeUpAcrossReplicas();
} finally {
  await rm(scratch, { recursive: true, force: true });
}
