/**
 * Benchmark (not a test): GET /builds with many finished builds kept in Redis, this tree against
 * the baseline (commit b19cfbf, which answers every kept build at once), in one run.
 *
 *   npm run bench:builds-page [-- records=100000 baselineRecords=10000 requests=200]
 *
 * Each side runs as its own process (bench/builds-page-side.ts) from its checkout (the baseline
 * from a temporary git worktree, removed at the end), on 127.0.0.1:0 with a redis-server of its
 * own on a free port (Debian's package, no persistence), filled with finished builds through its
 * own build registry. Then, one request at a time: the first page (`GET /builds`) and a filtered
 * one (`?status=failure`, one build in nine; and `?repository=` of one of 40), p50 and p99.
 * Target: p99 under 50 ms at 100,000 records. Figures: docs/benchmarks.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { symlink, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startRedis, type RedisProcess } from '../test/helpers/redis-process.js';

const BASELINE = 'b19cfbf';
const ROOT = resolve(import.meta.dirname, '..');
const args = Object.fromEntries(process.argv.slice(2).map((arg) => arg.split('=') as [string, string]));
const RECORDS = Number(args.records ?? 100_000);
const BASELINE_RECORDS = Number(args.baselineRecords ?? 10_000);
const REQUESTS = Number(args.requests ?? 200);

const QUERIES = [
  ['first page', ''],
  ['status=failure', '?status=failure'],
  ['repository=', `?repository=${encodeURIComponent('https://git.example.com/team-3/app-17.git')}`],
] as const;

interface Side {
  readonly url: string;
  readonly child: ChildProcess;
  readonly redis: RedisProcess;
}

async function startSide(checkout: string, records: number): Promise<Side> {
  const redis = await startRedis();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/builds-page-side.ts'), checkout, redis.url, String(records)],
    { cwd: checkout, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (!line.startsWith('{"url"')) continue;
    const { url } = JSON.parse(line) as { url: string };
    return { url, child, redis };
  }
  await redis.dispose();
  throw new Error(`the side of ${checkout} ended before it served`);
}

async function stopSide(side: Side): Promise<void> {
  const ended = new Promise((done) => side.child.once('exit', done));
  side.child.stdin?.end();
  await ended;
  await side.redis.dispose();
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** p50, p99 (ms) and the answer's size of `requests` calls of `path`, one at a time. */
async function measure(url: string, path: string, requests: number): Promise<string> {
  const times: number[] = [];
  let bytes = 0;
  let listed = 0;
  for (let i = 0; i < requests + 5; i++) {
    const started = performance.now();
    const res = await fetch(`${url}/builds${path}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /builds${path}: ${res.status} ${text.slice(0, 200)}`);
    if (i >= 5) times.push(performance.now() - started);
    bytes = text.length;
    listed = (JSON.parse(text) as { builds: unknown[] }).builds.length;
  }
  times.sort((a, b) => a - b);
  const kib = (bytes / 1024).toFixed(0);
  return `p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms (${listed} builds, ${kib} KiB)`;
}

async function report(name: string, side: Side, records: number, requests: number): Promise<void> {
  for (const [label, path] of QUERIES)
    console.log(
      `${name}, ${records} finished kept, GET /builds ${label}: ${await measure(side.url, path, requests)}`,
    );
}

const worktree = await mkdtemp(join(tmpdir(), 'ibs-bench-baseline-'));
const git = (...argv: string[]): Promise<void> =>
  new Promise((done, fail) => {
    const child = spawn('git', argv, { cwd: ROOT, stdio: 'ignore' });
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`git ${argv.join(' ')}: ${code}`))));
  });
try {
  await git('worktree', 'add', '--detach', worktree, BASELINE);
  await symlink(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  console.log(
    `${new Date().toISOString()}; ${RECORDS} records (this tree), ${BASELINE_RECORDS} (baseline ${BASELINE})`,
  );
  let started = performance.now();
  const current = await startSide(ROOT, RECORDS);
  console.log(`this tree filled in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  try {
    await report('this tree', current, RECORDS, REQUESTS);
  } finally {
    await stopSide(current);
  }
  started = performance.now();
  const baseline = await startSide(worktree, BASELINE_RECORDS);
  console.log(`baseline filled in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  try {
    await report(`baseline ${BASELINE}`, baseline, BASELINE_RECORDS, Math.min(REQUESTS, 50));
  } finally {
    await stopSide(baseline);
  }
} finally {
  await git('worktree', 'remove', '--force', worktree).catch(() => undefined);
  await rm(worktree, { recursive: true, force: true });
}
