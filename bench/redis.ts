/**
 * Benchmark (not a test): the added cost of Redis mode against embedded mode on the same machine,
 * in one run, with a redis-server of its own (Debian's package, loopback, no persistence).
 *
 *   npm run stack -- up                                     (for the build figures; skipped without it)
 *   npx tsx bench/redis.ts [runs=15] [reuses=20] [builds=7]   (npm run bench:redis)
 *
 * - A build printing 50 MB: the service on the real stack in each mode (the Dev Containers CLI,
 *   BuildKit, the registry), a fixture whose RUN step prints 44 MB (a log of about 50 MB with
 *   BuildKit's step prefixes), `builds` builds per mode after a warm-up, each of a new commit. Capture
 *   throughput is the log's bytes over the build's answer time, MB/s; target: Redis no slower than
 *   embedded by more than 10 %. (BuildKit clips a step's output, 2 MiB and 200 KiB/s in current
 *   releases, unless its daemon lifts BUILDKIT_STEP_LOG_MAX_SIZE and _SPEED; the stack's dockerd does.)
 * - The capture path alone, at its ceiling: a command printing 50 MB of build-like lines through
 *   src/exec/run.ts into each log store (open, stream, close), MB/s. Also printed, to split the
 *   difference: the embedded store masking the Redis password too (Redis mode masks it in every log:
 *   one more secret to look for in each byte), and the bare floor (redis-floor.ts: the same output
 *   into a file, and into redis-server, with no service code).
 * - GET /logs of a 10 MB log from the real app in each mode, ms.
 * - POST /build answer time of a reuse: on the real stack in each mode (reuse on), a fixture
 *   repository per mode built once, then `reuses` pushes per mode that change only a file outside
 *   the build's inputs, each answered as a reuse (checked with service_build_reuses_total); target:
 *   Redis adds less than 20 ms.
 * Runs are interleaved, and each round alternates which mode goes first; medians are printed. Figures and what bounds them: docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/exec/run.js';
import { TRUNCATED_MARKER } from '../src/redis/keys.js';
import { createLogStore } from '../src/logs/store.js';
import type { LogStore } from '../src/logs/types.js';
import { createStores, type Stores } from '../src/stores.js';
import { startApp, testConfig, type RunningApp } from '../test/helpers/app.js';
import { startRedis } from '../test/helpers/redis-process.js';
import { silentLogger } from '../test/helpers/silent-logger.js';
import { eventually } from '../test/helpers/eventually.js';
import { StackNotRunningError } from '../test/stack/env.js';
import { bareFloor } from './redis-floor.js';
import { sampleValue, scrapeMetrics } from '../test/helpers/metrics.js';

const runs = Number(process.argv[2] ?? 15);
/** Reuse answers per mode (interleaved). */
const REUSES = Number(process.argv[3] ?? 20);
/** Builds printing 50 MB per mode (interleaved), after one warm-up each. */
const BUILDS = Number(process.argv[4] ?? 7);
const CAPTURE_BYTES = 50_000_000;
const LOG_BYTES = 10_000_000;
/** What the loud build's RUN step prints: with BuildKit's `#N 1.234 ` before each line, a log of about 50 MB. */
const LOUD_STEP_BYTES = 44_000_000;
const LINE = '#12 [stage 3/7] RUN npm ci --omit=dev  added 1342 packages, audited 1343 in 41s ok\n';
const MODES = ['embedded', 'redis'] as const;
type Mode = (typeof MODES)[number];

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const pct = (redis: number, embedded: number): string =>
  `${redis >= embedded ? '+' : ''}${(((redis - embedded) / embedded) * 100).toFixed(1)} %`;
const verdict = (met: boolean): string => (met ? 'OK' : 'MISSED');

/** `node --expose-gc` (npm run bench:redis passes it): a full collection between capture runs. */
const collectGarbage = (globalThis as { gc?: () => void }).gc;
if (collectGarbage === undefined)
  console.log('(run with node --expose-gc for a collection between capture runs)');

const work = await mkdtemp(join(tmpdir(), 'ibs-bench-redis-'));
const redis = await startRedis();
const quiet = silentLogger();

function linesOf(bytes: number): string {
  return LINE.repeat(Math.ceil(bytes / LINE.length)).slice(0, bytes - 1) + '\n';
}

try {
  const output = join(work, 'output.txt');
  await writeFile(output, linesOf(CAPTURE_BYTES));

  // --- the capture path alone: from a command's stdout (src/exec/run.ts) to the store ---
  const config = (mode: Mode) =>
    testConfig({
      scratchDir: join(work, mode),
      logs: { retention: 100 },
      ...(mode === 'redis' ? { redis: { url: redis.url } } : {}),
    });
  const stores: Record<Mode, Stores> = {
    embedded: await createStores(config('embedded'), quiet),
    redis: await createStores(config('redis'), quiet),
  };
  await eventually(() => stores.redis.sharedStoreProbe?.(), { what: 'Redis to answer' });

  async function capture(store: LogStore): Promise<number> {
    const started = performance.now();
    const log = await store.open('img');
    await run('cat', [output], { baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, log });
    await log.close();
    const seconds = (performance.now() - started) / 1000;
    const { text } = await store.read(log.id);
    if (text.length < CAPTURE_BYTES) throw new Error(`captured ${text.length} of ${CAPTURE_BYTES} bytes`);
    await store.remove(log.id);
    return CAPTURE_BYTES / 1e6 / seconds;
  }
  // The embedded store with the Redis URL among the secrets it masks (it only masks with it).
  const maskingToo = await createLogStore({ ...config('redis'), scratchDir: join(work, 'masking') });
  const floor = await bareFloor(output, CAPTURE_BYTES, join(work, 'floor.txt'), redis);
  const captures = {
    embedded: () => capture(stores.embedded.logStore),
    maskingToo: () => capture(maskingToo),
    redis: () => capture(stores.redis.logStore),
    floorFile: () => floor.toFile(),
    floorRedis: () => floor.toRedis(),
  };
  const kinds = Object.keys(captures) as (keyof typeof captures)[];
  const throughput = Object.fromEntries(kinds.map((kind) => [kind, [] as number[]])) as Record<
    keyof typeof captures,
    number[]
  >;
  for (const kind of kinds) await captures[kind]();
  for (let i = 0; i < runs; i += 1) {
    // The order turns every round (what one run leaves behind weighs on each kind alike).
    for (let k = 0; k < kinds.length; k += 1) {
      const kind = kinds[(i + k) % kinds.length] as keyof typeof captures;
      throughput[kind].push(await captures[kind]());
      // The check read 50 MB into strings: collected here, so that no run pays for the one before.
      collectGarbage?.();
    }
  }
  floor.close();
  await stores.embedded.close();
  await stores.redis.close();

  // --- GET /logs of a 10 MB log, from the real app in each mode ---
  const apps: Record<Mode, RunningApp> = {
    embedded: await startApp({ logs: { retention: 100 } }),
    redis: await startApp({ logs: { retention: 100 }, redis: { url: redis.url } }),
  };
  await eventually(() => apps.redis.ctx.sharedStoreProbe?.(), { what: 'Redis to answer' });
  const tenMb = linesOf(LOG_BYTES);
  const ids: Record<Mode, string> = { embedded: '', redis: '' };
  for (const mode of MODES) {
    const log = await apps[mode].ctx.logStore.open('img');
    log.write(tenMb);
    await log.close();
    ids[mode] = log.id;
  }
  async function getLog(mode: Mode): Promise<number> {
    const started = performance.now();
    const res = await fetch(`${apps[mode].url}/logs/${ids[mode]}`);
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200 || text.length !== LOG_BYTES) throw new Error(`GET /logs answered ${res.status}`);
    return ms;
  }
  const getMs: Record<Mode, number[]> = { embedded: [], redis: [] };
  await getLog('embedded');
  await getLog('redis');
  for (let i = 0; i < Math.max(runs, 5); i += 1) {
    getMs.embedded.push(await getLog('embedded'));
    getMs.redis.push(await getLog('redis'));
  }
  await apps.embedded.close();
  await apps.redis.close();

  // --- on the real stack: builds printing 50 MB, and reuse answers ---
  const onStack = await stackFigures().catch((err: unknown) => {
    if (err instanceof StackNotRunningError) return err.message;
    throw err;
  });

  const cap = Object.fromEntries(kinds.map((kind) => [kind, median(throughput[kind])])) as Record<
    keyof typeof captures,
    number
  >;
  const get = { embedded: median(getMs.embedded), redis: median(getMs.redis) };
  console.log(`Redis mode against embedded mode (medians of interleaved runs, same machine)`);
  if (typeof onStack === 'string') console.log(`a build printing 50 MB: not measured: ${onStack}`);
  else {
    const { loud } = onStack;
    console.log(
      `capture throughput of a build printing 50 MB (${BUILDS} builds per mode, logs of ${loud.logMb.toFixed(1)} MB): ` +
        `embedded ${loud.embedded.mbs.toFixed(1)} MB/s (answered in ${loud.embedded.seconds.toFixed(2)} s; ${loud.embedded.range}), ` +
        `Redis ${loud.redis.mbs.toFixed(1)} MB/s (${loud.redis.seconds.toFixed(2)} s; ${loud.redis.range}) ` +
        `(${pct(loud.redis.mbs, loud.embedded.mbs)}; target: not below -10 %) ${verdict(loud.redis.mbs >= loud.embedded.mbs * 0.9)}`,
    );
  }
  console.log(
    `the capture path alone, at its ceiling (50 MB through run(), no build; ${runs} runs): embedded ${cap.embedded.toFixed(1)} MB/s, ` +
      `Redis ${cap.redis.toFixed(1)} MB/s (${pct(cap.redis, cap.embedded)})`,
  );
  console.log(
    `  of which masking the Redis password: embedded masking it too ${cap.maskingToo.toFixed(1)} MB/s ` +
      `(${pct(cap.maskingToo, cap.embedded)}); Redis against that: ${pct(cap.redis, cap.maskingToo)}`,
  );
  console.log(
    `  the bare floor, no service code (cat into a file, into redis-server): ${cap.floorFile.toFixed(1)} MB/s, ` +
      `${cap.floorRedis.toFixed(1)} MB/s (${pct(cap.floorRedis, cap.floorFile)})`,
  );
  console.log(
    `GET /logs of a 10 MB log (${Math.max(runs, 5)} runs): embedded ${get.embedded.toFixed(1)} ms, Redis ${get.redis.toFixed(1)} ms ` +
      `(${get.redis >= get.embedded ? '+' : ''}${(get.redis - get.embedded).toFixed(1)} ms)`,
  );
  if (typeof onStack === 'string')
    console.log(`POST /build answer time of a reuse: not measured: ${onStack}`);
  else {
    const { reuse } = onStack;
    const added = reuse.redis - reuse.embedded;
    console.log(
      `POST /build answer time of a reuse (${REUSES} runs): embedded ${reuse.embedded.toFixed(1)} ms, ` +
        `Redis ${reuse.redis.toFixed(1)} ms (${added >= 0 ? '+' : ''}${added.toFixed(1)} ms; target: under +20 ms) ` +
        `${verdict(added < 20)}`,
    );
  }

  /**
   * The service in each mode on the real stack (reuse on), each with two fixture repositories of its
   * own: one whose build prints 50 MB, one that is built once and then answered as a reuse.
   */
  async function stackFigures() {
    // Loaded here: they read the stack's endpoints when loaded (StackNotRunningError without it).
    const { startBuildApp, stack } = await import('../test/helpers/build-support.js');
    const { testRepo } = await import('../test/helpers/reuse-support.js');
    const tag = randomBytes(3).toString('hex');
    const fixtures = await Promise.all(
      MODES.map(async (mode) => ({
        mode,
        loudRepo: await testRepo(`bench-redis-loud-${mode}`),
        reuseRepo: await testRepo(`bench-redis-${mode}`),
        app: await startBuildApp({
          logs: { retention: 1000 },
          build: { reuse: true, maxConcurrent: 2 },
          ...(mode === 'redis' ? { redis: { url: redis.url } } : {}),
        }),
      })),
    );
    type Fixture = (typeof fixtures)[number];
    const post = async (f: Fixture, repository: string): Promise<{ ms: number; imageBuildLogId: string }> => {
      const started = performance.now();
      const res = await fetch(`${f.app.url}/build`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          repository,
          gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
          image: { registry: stack.REGISTRY_ANON, name: `bench/redis-${tag}-${f.mode}` },
        }),
      });
      const body = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`POST /build (${f.mode}) answered ${res.status}: ${body}`);
      return { ms, imageBuildLogId: (JSON.parse(body) as { imageBuildLogId: string }).imageBuildLogId };
    };
    /** A new commit whose build runs the loud step again (its COPY changed); the log's bytes and the answer time. */
    const loudBuild = async (f: Fixture, round: string): Promise<{ bytes: number; ms: number }> => {
      // Unique to this run and mode: BuildKit's cache would otherwise skip the step.
      await f.loudRepo.commit({ '.devcontainer/round.txt': `${tag} ${f.mode} ${round}\n` });
      const { ms, imageBuildLogId } = await post(f, f.loudRepo.url);
      const text = await (await fetch(`${f.app.url}/logs/${imageBuildLogId}`)).text();
      if (text.includes('[output clipped'))
        throw new Error(
          'BuildKit clipped the step output: restart the stack (its dockerd lifts the step-log limits)',
        );
      if (text.includes(TRUNCATED_MARKER) || text.length < LOUD_STEP_BYTES)
        throw new Error(`${f.mode}: the build log holds ${text.length} bytes`);
      return { bytes: Buffer.byteLength(text), ms };
    };
    const reuses = async (f: Fixture): Promise<number> => {
      return sampleValue(await scrapeMetrics(f.app.url), 'service_build_reuses_total') ?? 0;
    };
    // Each mode goes first every other round.
    const rounds = (i: number): Fixture[] => (i % 2 === 0 ? fixtures : [...fixtures].reverse());

    /** A warm-up build per mode, then BUILDS per mode; the median log over the median answer time. */
    async function loudBuilds() {
      for (const f of fixtures) {
        await f.loudRepo.commit({
          '.devcontainer/devcontainer.json': `${JSON.stringify({ build: { dockerfile: 'Dockerfile' } })}\n`,
          '.devcontainer/Dockerfile':
            `FROM ${stack.BASE_IMAGE_ANON}\nCOPY round.txt /round.txt\n` +
            `RUN yes '${LINE.slice(0, -1)}' | head -c ${LOUD_STEP_BYTES}\n`,
        });
        await loudBuild(f, 'warm-up');
      }
      const answers: Record<Mode, { bytes: number; ms: number }[]> = { embedded: [], redis: [] };
      for (let i = 0; i < BUILDS; i += 1)
        for (const f of rounds(i)) answers[f.mode].push(await loudBuild(f, `round ${i}`));
      const of = (mode: Mode) => {
        const all = answers[mode].map((r) => r.ms / 1000);
        const seconds = median(all);
        const range = `${Math.min(...all).toFixed(2)}-${Math.max(...all).toFixed(2)} s`;
        return { mbs: median(answers[mode].map((r) => r.bytes / 1e6)) / seconds, seconds, range };
      };
      return {
        logMb: median(answers.embedded.map((r) => r.bytes / 1e6)),
        embedded: of('embedded'),
        redis: of('redis'),
      };
    }

    /** One build per mode and a first reuse (warms the registry client and the connections), then REUSES per mode. */
    async function reuseAnswers() {
      for (const f of fixtures) {
        await f.reuseRepo.commit({
          '.devcontainer/devcontainer.json': `${JSON.stringify({ image: stack.BASE_IMAGE_ANON })}\n`,
          'src/main.txt': 'v0\n',
        });
        await post(f, f.reuseRepo.url);
        await f.reuseRepo.commit({ 'src/main.txt': 'warm-up\n' });
        await post(f, f.reuseRepo.url);
      }
      const before = await Promise.all(fixtures.map(reuses));
      const ms: Record<Mode, number[]> = { embedded: [], redis: [] };
      for (let i = 0; i < REUSES; i += 1) {
        for (const f of rounds(i)) {
          await f.reuseRepo.commit({ 'src/main.txt': `push ${i}\n` });
          ms[f.mode].push((await post(f, f.reuseRepo.url)).ms);
        }
      }
      const after = await Promise.all(fixtures.map(reuses));
      fixtures.forEach((f, i) => {
        const counted = (after[i] ?? 0) - (before[i] ?? 0);
        if (counted !== REUSES) throw new Error(`${f.mode}: ${counted} of ${REUSES} answers were reuses`);
      });
      return { embedded: median(ms.embedded), redis: median(ms.redis) };
    }

    try {
      for (const f of fixtures)
        if (f.mode === 'redis')
          await eventually(() => f.app.ctx.sharedStoreProbe?.(), { what: 'Redis to answer' });
      return { loud: await loudBuilds(), reuse: await reuseAnswers() };
    } finally {
      for (const f of fixtures) {
        await f.app.close();
        await f.loudRepo.dispose();
        await f.reuseRepo.dispose();
      }
    }
  }
} finally {
  await redis.dispose();
  await rm(work, { recursive: true, force: true });
}
