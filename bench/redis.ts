/**
 * Benchmark (not a test): the added cost of Redis mode against embedded mode on the same machine,
 * in one run, with a redis-server of its own (Debian's package, loopback, no persistence).
 *
 *   npm run stack -- up                            (for the reuse answers; skipped without it)
 *   npx tsx bench/redis.ts [runs=15] [reuses=20]   (npm run bench:redis)
 *
 * - capture: a command printing 50 MB of build-like lines through src/exec/run.ts into each log
 *   store (open, stream, close), MB/s; target: Redis no slower than embedded by more than 10 %.
 *   Also printed, to split the difference: the embedded store masking the Redis password too (Redis
 *   mode masks it in every log: one more secret to look for in each byte).
 * - GET /logs of a 10 MB log from the real app in each mode, ms.
 * - POST /build answer time of a reuse: the service on the real stack in each mode (reuse on), a
 *   fixture repository per mode built once, then `reuses` pushes per mode that change only a file
 *   outside the build's inputs, each answered as a reuse (checked with service_build_reuses_total);
 *   target: Redis adds less than 20 ms.
 * Runs are interleaved, and each round alternates which mode goes first; medians are printed. Figures and what bounds them: README "Redis mode".
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/exec/run.js';
import { createLogStore } from '../src/logs/store.js';
import type { LogStore } from '../src/logs/types.js';
import { createStores, type Stores } from '../src/stores.js';
import { startApp, testConfig, type RunningApp } from '../test/helpers/app.js';
import { startRedis } from '../test/helpers/redis-process.js';
import { silentLogger } from '../test/helpers/silent-logger.js';
import { StackNotRunningError } from '../test/stack/env.js';

const runs = Number(process.argv[2] ?? 15);
/** Reuse answers per mode (interleaved). */
const REUSES = Number(process.argv[3] ?? 20);
const CAPTURE_BYTES = 50_000_000;
const LOG_BYTES = 10_000_000;
const LINE = '#12 [stage 3/7] RUN npm ci --omit=dev  added 1342 packages, audited 1343 in 41s ok\n';

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const pct = (redis: number, embedded: number): string =>
  `${redis >= embedded ? '+' : ''}${(((redis - embedded) / embedded) * 100).toFixed(1)} %`;

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

  // --- capture: the log store's path from a command's stdout (src/exec/run.ts) to the store ---
  const config = (mode: 'embedded' | 'redis') =>
    testConfig({
      scratchDir: join(work, mode),
      commandLogRetention: 100,
      ...(mode === 'redis' ? { redisUrl: redis.url } : {}),
    });
  const stores: Record<'embedded' | 'redis', Stores> = {
    embedded: await createStores(config('embedded'), quiet),
    redis: await createStores(config('redis'), quiet),
  };
  while (!(await stores.redis.sharedStoreProbe?.())) await new Promise((r) => setTimeout(r, 50));

  async function capture(store: LogStore): Promise<number> {
    const started = performance.now();
    const log = await store.open('img');
    await run('cat', [output], { baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, log });
    await log.close();
    const seconds = (performance.now() - started) / 1000;
    const { text } = await store.read(log.id);
    if (text.length < CAPTURE_BYTES) throw new Error(`captured ${text.length} of ${CAPTURE_BYTES} bytes`);
    await store.remove(log.id);
    // The check read 50 MB into strings: collected here, so that no run pays for the one before.
    collectGarbage?.();
    return CAPTURE_BYTES / 1e6 / seconds;
  }
  // The embedded store with the Redis URL among the secrets it masks (it only masks with it).
  const maskingToo = await createLogStore({ ...config('redis'), scratchDir: join(work, 'masking') });
  const captureStores = {
    embedded: stores.embedded.logStore,
    maskingToo,
    redis: stores.redis.logStore,
  };
  const modes = Object.keys(captureStores) as (keyof typeof captureStores)[];
  const throughput = { embedded: [] as number[], maskingToo: [] as number[], redis: [] as number[] };
  for (const mode of modes) await capture(captureStores[mode]);
  for (let i = 0; i < runs; i += 1) {
    // The order turns every round (what one run leaves behind weighs on each mode alike).
    for (let k = 0; k < modes.length; k += 1) {
      const mode = modes[(i + k) % modes.length] as keyof typeof captureStores;
      throughput[mode].push(await capture(captureStores[mode]));
    }
  }
  await stores.embedded.close();
  await stores.redis.close();

  // --- GET /logs of a 10 MB log, from the real app in each mode ---
  const apps: Record<'embedded' | 'redis', RunningApp> = {
    embedded: await startApp({ commandLogRetention: 100 }),
    redis: await startApp({ commandLogRetention: 100, redisUrl: redis.url }),
  };
  while (!(await apps.redis.ctx.sharedStoreProbe?.())) await new Promise((r) => setTimeout(r, 50));
  const tenMb = linesOf(LOG_BYTES);
  const ids: Record<'embedded' | 'redis', string> = { embedded: '', redis: '' };
  for (const mode of ['embedded', 'redis'] as const) {
    const log = await apps[mode].ctx.logStore.open('img');
    log.write(tenMb);
    await log.close();
    ids[mode] = log.id;
  }
  async function getLog(mode: 'embedded' | 'redis'): Promise<number> {
    const started = performance.now();
    const res = await fetch(`${apps[mode].url}/logs/${ids[mode]}`);
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200 || text.length !== LOG_BYTES) throw new Error(`GET /logs answered ${res.status}`);
    return ms;
  }
  const getMs = { embedded: [] as number[], redis: [] as number[] };
  await getLog('embedded');
  await getLog('redis');
  for (let i = 0; i < Math.max(runs, 5); i += 1) {
    getMs.embedded.push(await getLog('embedded'));
    getMs.redis.push(await getLog('redis'));
  }
  await apps.embedded.close();
  await apps.redis.close();

  // --- POST /build answer time of a reuse, against the real stack ---
  const reuse = await reuseAnswers().catch((err: unknown) => {
    if (err instanceof StackNotRunningError) return err.message;
    throw err;
  });

  const cap = {
    embedded: median(throughput.embedded),
    maskingToo: median(throughput.maskingToo),
    redis: median(throughput.redis),
  };
  const get = { embedded: median(getMs.embedded), redis: median(getMs.redis) };
  console.log(`Redis mode against embedded mode (medians of interleaved runs, same machine)`);
  console.log(
    `capture of 50 MB through run() (${runs} runs): embedded ${cap.embedded.toFixed(1)} MB/s, Redis ${cap.redis.toFixed(1)} MB/s ` +
      `(${pct(cap.redis, cap.embedded)}; target: not below -10 %) ${cap.redis >= cap.embedded * 0.9 ? 'OK' : 'MISSED'}`,
  );
  console.log(
    `  of which masking the Redis password: embedded masking it too ${cap.maskingToo.toFixed(1)} MB/s ` +
      `(${pct(cap.maskingToo, cap.embedded)}); Redis against that: ${pct(cap.redis, cap.maskingToo)}`,
  );
  console.log(
    `GET /logs of a 10 MB log (${Math.max(runs, 5)} runs): embedded ${get.embedded.toFixed(1)} ms, Redis ${get.redis.toFixed(1)} ms ` +
      `(${get.redis >= get.embedded ? '+' : ''}${(get.redis - get.embedded).toFixed(1)} ms)`,
  );
  if (typeof reuse === 'string') console.log(`POST /build answer time of a reuse: not measured: ${reuse}`);
  else {
    const added = reuse.redis - reuse.embedded;
    console.log(
      `POST /build answer time of a reuse (${REUSES} runs): embedded ${reuse.embedded.toFixed(1)} ms, ` +
        `Redis ${reuse.redis.toFixed(1)} ms (${added >= 0 ? '+' : ''}${added.toFixed(1)} ms; target: under +20 ms) ` +
        `${added < 20 ? 'OK' : 'MISSED'}`,
    );
  }

  /**
   * One fixture repository per mode, built once with reuse on; then REUSES pushes per mode (interleaved)
   * that change only a file outside the build's inputs, each answered as a reuse. Median ms per mode.
   */
  async function reuseAnswers(): Promise<Record<'embedded' | 'redis', number>> {
    // Loaded here: they read the stack's endpoints when loaded (StackNotRunningError without it).
    const { startBuildApp, stack } = await import('../test/integration/build-support.js');
    const { testRepo } = await import('../test/integration/reuse-support.js');
    const tag = randomBytes(3).toString('hex');
    const modes = ['embedded', 'redis'] as const;
    const fixtures = await Promise.all(
      modes.map(async (mode) => ({
        mode,
        repo: await testRepo(`bench-redis-${mode}`),
        app: await startBuildApp({
          commandLogRetention: 1000,
          build: { reuse: true, maxConcurrent: 2 },
          ...(mode === 'redis' ? { redisUrl: redis.url } : {}),
        }),
      })),
    );
    try {
      const post = async (f: (typeof fixtures)[number]): Promise<number> => {
        const started = performance.now();
        const res = await fetch(`${f.app.url}/build`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            repository: f.repo.url,
            gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
            image: { registry: stack.REGISTRY_ANON, name: `bench/redis-${tag}-${f.mode}` },
          }),
        });
        const body = await res.text();
        const ms = performance.now() - started;
        if (res.status !== 200) throw new Error(`POST /build (${f.mode}) answered ${res.status}: ${body}`);
        return ms;
      };
      const reuses = async (f: (typeof fixtures)[number]): Promise<number> => {
        const text = await (await fetch(`${f.app.url}/metrics`)).text();
        return Number(/^service_build_reuses_total (\S+)$/m.exec(text)?.[1] ?? 0);
      };
      for (const f of fixtures) {
        while (f.mode === 'redis' && !(await f.app.ctx.sharedStoreProbe?.()))
          await new Promise((r) => setTimeout(r, 50));
        await f.repo.commit({
          '.devcontainer/devcontainer.json': `${JSON.stringify({ image: stack.BASE_IMAGE_ANON })}\n`,
          'src/main.txt': 'v0\n',
        });
        await post(f); // the one build
        await f.repo.commit({ 'src/main.txt': 'warm-up\n' });
        await post(f); // a first reuse (warms the registry client and the connections)
      }
      const before = await Promise.all(fixtures.map(reuses));
      const ms: Record<'embedded' | 'redis', number[]> = { embedded: [], redis: [] };
      for (let i = 0; i < REUSES; i += 1) {
        // Each mode goes first every other round.
        for (const f of i % 2 === 0 ? fixtures : [...fixtures].reverse()) {
          await f.repo.commit({ 'src/main.txt': `push ${i}\n` });
          ms[f.mode].push(await post(f));
        }
      }
      const after = await Promise.all(fixtures.map(reuses));
      fixtures.forEach((f, i) => {
        const counted = (after[i] ?? 0) - (before[i] ?? 0);
        if (counted !== REUSES) throw new Error(`${f.mode}: ${counted} of ${REUSES} answers were reuses`);
      });
      return { embedded: median(ms.embedded), redis: median(ms.redis) };
    } finally {
      for (const f of fixtures) {
        await f.app.close();
        await f.repo.dispose();
      }
    }
  }
} finally {
  await redis.dispose();
  await rm(work, { recursive: true, force: true });
}
