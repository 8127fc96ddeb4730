/**
 * Benchmark (not a test): GET /builds with many finished builds kept in Redis, this tree against
 * the baseline (commit b19cfbf, which answers every kept build at once), in one run.
 *
 *   npm run bench:builds-page [-- records=100000 baselineRecords=10000 requests=200]
 *
 * Each side runs as its own process (bench/builds-page-side.ts) from its checkout (the baseline
 * from a temporary git worktree, removed at the end), on 127.0.0.1:0 with a redis-server of its
 * own on a free port (Debian's package, no persistence), filled with finished builds through its
 * own build registry. Then, one request at a time: the first page (`GET /builds`) and filtered
 * ones (`?status=failure`, one build in nine; `?repository=` of one of 40; on this tree also
 * `?tenant=`, `?branch=`, `?trigger=` and two filters at once), p50 and p99.
 * Target: p99 under 50 ms at 100,000 records. Figures: docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import { symlink, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startSide, stopSide, timePage, type Side } from './builds-page-runner.js';

const BASELINE = 'b19cfbf';
const ROOT = resolve(import.meta.dirname, '..');
const args = Object.fromEntries(process.argv.slice(2).map((arg) => arg.split('=') as [string, string]));
const RECORDS = Number(args.records ?? 100_000);
const BASELINE_RECORDS = Number(args.baselineRecords ?? 10_000);
const REQUESTS = Number(args.requests ?? 200);

const REPOSITORY = encodeURIComponent('https://git.example.com/team-3/app-17.git');
/** The queries both sides answer. */
const QUERIES: readonly (readonly [string, string])[] = [
  ['first page', ''],
  ['status=failure', '?status=failure'],
  ['repository=', `?repository=${REPOSITORY}`],
];
/** This tree's other filters: one of 7 tenants, a branch (one in three), a trigger (all), and two filters at once (one build in 360). */
const MORE_QUERIES: readonly (readonly [string, string])[] = [
  ['tenant=', '?tenant=team-3'],
  ['branch=main', '?branch=main'],
  ['trigger=api', '?trigger=api'],
  ['status=failure&repository=', `?status=failure&repository=${REPOSITORY}`],
];

/** p50, p99 (ms) and the answer's size of `requests` calls of `path`, one at a time. */
async function measure(url: string, path: string, requests: number): Promise<string> {
  const { p50, p99, listed, bytes } = await timePage(url, path, requests);
  return `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${listed} builds, ${(bytes / 1024).toFixed(0)} KiB)`;
}

async function report(
  name: string,
  side: Side,
  records: number,
  requests: number,
  queries = QUERIES,
): Promise<void> {
  for (const [label, path] of queries)
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
    await report('this tree', current, RECORDS, REQUESTS, [...QUERIES, ...MORE_QUERIES]);
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
