/**
 * A service with many finished builds kept in Redis, for the benches that time `GET /builds`
 * (bench:builds-page, bench:scale): its side process (bench/builds-page-side.ts, from a checkout)
 * on a redis-server of its own, and the timing of a page, one request at a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startRedis, type RedisProcess } from '../test/helpers/redis-process.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface Side {
  readonly url: string;
  readonly child: ChildProcess;
  readonly redis: RedisProcess;
}

/** The service of `checkout` with `records` finished builds kept, once it serves. */
export async function startSide(checkout: string, records: number): Promise<Side> {
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

export async function stopSide(side: Side): Promise<void> {
  const ended = new Promise((done) => side.child.once('exit', done));
  side.child.stdin?.end();
  await ended;
  await side.redis.dispose();
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

export interface PageTimes {
  readonly p50: number;
  readonly p99: number;
  /** Builds in the last answer, and its size. */
  readonly listed: number;
  readonly bytes: number;
}

/** p50 and p99 (ms) of `requests` calls of `GET /builds<path>`, one at a time, after 5 unmeasured. */
export async function timePage(url: string, path: string, requests: number): Promise<PageTimes> {
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
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), listed, bytes };
}
