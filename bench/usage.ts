// Usage per tenant (`npm run bench:usage`; no stack needed): the in-process service, embedded and
// on a redis-server of its own (Debian's package, loopback), in one run. Each mode meters 100,000
// synthetic ended builds spread over 90 days through the metering path (the build-ended
// listener's own call: saved-time lookups, then the one write), 12 tenants x 4 repositories x 2
// triggers, 30 % reuses, 8 BuildKit steps a build (half cached); then GET /usage?by=tenant,day
// over the 90 days, 20 times. Prints the metering's time per build (median, p95) and the
// query's (median, p95), against the targets (2 ms, 500 ms).
import { cpus, loadavg } from 'node:os';
import type { BuildRecord, BuildStep } from '../src/builds/types.js';
import type { Usage } from '../src/usage/usage.js';
import { startApp, type RunningApp } from '../test/helpers/app.js';
import { startRedis } from '../test/helpers/redis-process.js';

const BUILDS = 100_000;
const DAYS = 90;
const QUERIES = 20;
const TENANTS = 12;
const REPOSITORIES = 4;

const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;
const ms = (value: number): string => `${value.toFixed(3)} ms`;

/** The i-th synthetic build, ended at `endedAtMs`. */
function syntheticRecord(i: number, endedAtMs: number): BuildRecord {
  const tenant = `team-${i % TENANTS}`;
  const repository = `https://git.example.com/${tenant}/app-${Math.floor(i / TENANTS) % REPOSITORIES}.git`;
  const reused = i % 10 < 3;
  const duration = reused ? 1 + (i % 3) : 30 + (i % 90);
  const steps: BuildStep[] = Array.from({ length: 8 }, (_, s) => ({
    name: `[${s + 1}/8] RUN step ${s} of ${repository}`,
    cached: s % 2 === 0,
    startedAt: new Date(endedAtMs - duration * 1000).toISOString(),
    durationMs: 500 + s * 100,
  }));
  return {
    id: `bench-${i}`,
    requestId: `bench-${i}`,
    trigger: i % 2 === 0 ? 'api' : 'push',
    repository,
    image: `registry.example.com/${tenant}/app`,
    phase: 'finished',
    startedAt: new Date(endedAtMs - duration * 1000 - 2000).toISOString(),
    elapsedSeconds: duration,
    durationSeconds: duration,
    builder: 'tcp://builder:1234',
    waiters: 0,
    status: i % 50 === 0 ? 'failure' : 'success',
    key: { key: `key-${repository}-${Math.floor(i / 100)}`, inputs: [] },
    answer: { status: 200, body: { digest: `sha256:${i}` } },
    ...(reused
      ? {}
      : {
          steps,
          pushed: {
            digest: `sha256:${i}`,
            platforms: [{ platform: 'linux/amd64', digest: `sha256:${i}`, compressedBytes: 50_000_000 }],
          },
        }),
  };
}

async function measure(mode: string, app: RunningApp): Promise<string> {
  const usage = app.ctx.usage as Usage;
  const now = Date.now();
  const span = DAYS * 24 * 3600 * 1000;
  const times: number[] = [];
  let retries = 0;
  for (let i = 0; i < BUILDS; i += 1) {
    const endedAtMs = now - span + Math.floor((span * i) / BUILDS);
    const ended = { record: syntheticRecord(i, endedAtMs), endedAtMs };
    const started = performance.now();
    // The write is keyed by the build id: a retry after a refused call (Redis busy) counts once.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await usage.meter(ended);
        break;
      } catch (err) {
        if (attempt === 10) throw err;
        retries += 1;
        // Refused while the connection is re-established (no offline queue): wait for it.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    times.push(performance.now() - started);
  }
  const from = new Date(now - span).toISOString().slice(0, 10);
  const to = new Date(now + 24 * 3600 * 1000).toISOString().slice(0, 10);
  const queries: number[] = [];
  let rows = 0;
  for (let q = 0; q < QUERIES; q += 1) {
    const started = performance.now();
    const res = await fetch(`${app.url}/usage?from=${from}&to=${to}&by=tenant,day`);
    const body = (await res.json()) as { rows: unknown[]; total: { builds: number } };
    queries.push(performance.now() - started);
    rows = body.rows.length;
    if (body.total.builds !== BUILDS) throw new Error(`${mode}: ${body.total.builds} builds counted`);
  }
  return [
    `${mode}: metering per build median ${ms(quantile(times, 0.5))}, p95 ${ms(quantile(times, 0.95))} (target: median < 2 ms), ${retries} retried`,
    `${mode}: GET /usage?by=tenant,day over ${DAYS} days (${rows} rows): median ${ms(quantile(queries, 0.5))}, p95 ${ms(quantile(queries, 0.95))} (target: p95 < 500 ms)`,
  ].join('\n');
}

const lines = [
  `bench:usage ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}: ${BUILDS} builds over ${DAYS} days, ${TENANTS} tenants`,
];
const embedded = await startApp();
try {
  lines.push(await measure('embedded', embedded));
} finally {
  await embedded.close();
}
const redis = await startRedis();
const shared = await startApp({ redis: { url: redis.url } });
try {
  lines.push(await measure('redis', shared));
} finally {
  await shared.close();
  await redis.dispose();
}
lines.push(
  `load after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(lines.join('\n'));
