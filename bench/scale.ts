/**
 * Benchmark (not a test): the shared build queue at scale, today's against the baseline's (the
 * queue of commit b19cfbf: one JSON document changed in optimistic transactions), in one run.
 *
 *   npm run bench:scale [-- seconds=5] [idle=10] [records=100000] [requests=200]
 *
 * No stack needed: a redis-server of the bench's own on a free port. For 2, 8 and 16 replica
 * processes (bench/scale-replica.ts, one per replica, each looping enqueue, take and finish over
 * 50 tenants) and 100, 1,000 and 10,000 builds waiting, it prints the queue operations per second
 * of all replicas, their p50 and p99, and the bytes Redis received per operation
 * (`total_net_input_bytes`); then, with every replica idle, the Redis commands per second each
 * sends (INFO commandstats). The baseline is checked out into a temporary git worktree made and
 * removed by the bench. Beside each line of this tree: `GET /builds` (first page) p50 and p99,
 * one request at a time right after the line's queue run, of this tree's service with 100,000
 * finished builds kept (bench/builds-page-runner.ts: its own process and redis-server, filled
 * once at the start). Targets: p99 under 10 ms at every size, bytes per operation within 10 %
 * across depths, at least 2,000 operations per second at 16 replicas and 10,000 waiting, an idle
 * replica at most 2 commands per second, `GET /builds` p99 under 50 ms at 100,000 records.
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedis, type RedisProcess } from '../test/helpers/redis-process.js';
import type * as ConnectionModule from '../src/redis/connection.js';
import type * as QueueModule from '../src/queue/redis-queue.js';
import { startSide, stopSide, timePage, type Side } from './builds-page-runner.js';
import { benchEntry } from './scale-replica.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASELINE_COMMIT = 'b19cfbf';
const REPLICAS = [2, 8, 16];
const DEPTHS = [100, 1000, 10_000];
const TENANTS = 50;
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.split('=') as [string, string]));
const SECONDS = Number(args.seconds ?? 5);
const IDLE_SECONDS = Number(args.idle ?? 10);
const RECORDS = Number(args.records ?? 100_000);
const PAGE_REQUESTS = Number(args.requests ?? 200);

type Flavour = 'current' | 'baseline';
interface Line {
  readonly flavour: Flavour;
  readonly replicas: number;
  readonly depth: number;
  readonly opsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly bytesPerOp: number;
  readonly errors: number;
  readonly load: number;
}

/** Columns other measures of the same run add: each answers its cells for one line, after the queue's. */
interface Column {
  readonly title: string;
  cell(line: Line, redis: Redis): Promise<string>;
}

/** `GET /builds` (first page) of `side`, p50 / p99 ms; this tree's lines only. */
const pageColumn = (side: Side): Column => ({
  title: `GET /builds p50 / p99 ms (${RECORDS.toLocaleString('en')} kept)`,
  async cell(line) {
    if (line.flavour !== 'current') return 'n/a';
    const { p50, p99 } = await timePage(side.url, '', PAGE_REQUESTS);
    return `${fixed(p50, 2)} / ${fixed(p99, 2)}`;
  },
});

const quantile = (sorted: readonly number[], q: number): number =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN);

/** The baseline's source tree: a worktree under node_modules/.cache (its imports resolve to ours). */
function baselineTree(): { root: string; remove(): void } {
  const parent = join(ROOT, 'node_modules', '.cache', 'ibs-bench-scale');
  mkdirSync(parent, { recursive: true });
  const root = join(parent, randomBytes(4).toString('hex'));
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, BASELINE_COMMIT], {
    stdio: 'ignore',
  });
  return {
    root,
    remove() {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', root], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `count` replica processes of `flavour` on `tree`, each ready for commands. */
async function replicas(tree: string, flavour: Flavour, url: string, count: number): Promise<ChildProcess[]> {
  const children = Array.from({ length: count }, (_, i) =>
    fork(join(ROOT, 'bench', 'scale-replica.ts'), [tree, url, `${flavour}-${i}`, flavour], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  await Promise.all(children.map((child) => answerOf(child)));
  return children;
}

const answerOf = <T>(child: ChildProcess): Promise<T> =>
  new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message as T));
    child.once('exit', (code) => reject(new Error(`a replica exited (${code})`)));
  });

/** `depth` builds waiting, written as each queue keeps them (the baseline's document set at once). */
async function prefill(
  redis: Redis,
  tree: string,
  flavour: Flavour,
  url: string,
  depth: number,
): Promise<void> {
  await redis.flushall();
  const entries = Array.from({ length: depth }, (_, i) => benchEntry(`tenant-${i % TENANTS}`, 'prefill'));
  if (flavour === 'baseline') {
    const rings = [[...new Set(entries.map((e) => e.tenant))], [], []];
    await redis.set('ibs:queue', JSON.stringify({ waiting: entries, rings, running: [], takes: [] }));
    return;
  }
  const { createRedisConnection } = (await import(
    join(tree, 'src/redis/connection.ts')
  )) as typeof ConnectionModule;
  const { createRedisQueue } = (await import(join(tree, 'src/queue/redis-queue.ts'))) as typeof QueueModule;
  const { silentLogger } = await import('../test/helpers/silent-logger.js');
  const connection = createRedisConnection({ kind: 'server', url }, silentLogger());
  if (connection.client.status !== 'ready') await new Promise((r) => connection.client.once('ready', r));
  const store = createRedisQueue(connection, 'prefill', silentLogger());
  for (let i = 0; i < entries.length; i += 500)
    await Promise.all(entries.slice(i, i + 500).map((e) => store.enqueue(e)));
  await connection.close();
}

const netInput = async (redis: Redis): Promise<number> =>
  Number(/total_net_input_bytes:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);

/** Commands Redis ran so far, but the INFO the bench asks itself. */
async function commands(redis: Redis): Promise<number> {
  const text = await redis.info('commandstats');
  return [...text.matchAll(/cmdstat_(\w+[|\w]*):calls=(\d+)/g)]
    .filter(([, name]) => name !== 'info')
    .reduce((sum, [, , calls]) => sum + Number(calls), 0);
}

async function measure(
  redis: Redis,
  children: ChildProcess[],
  line: Omit<Line, 'opsPerSecond' | 'p50' | 'p99' | 'bytesPerOp' | 'errors' | 'load'>,
): Promise<Line> {
  const before = await netInput(redis);
  const answers = children.map((child) => answerOf<{ ms: number[]; errors: number }>(child));
  for (const child of children) child.send({ kind: 'load', durationMs: SECONDS * 1000, tenants: TENANTS });
  const results = await Promise.all(answers);
  const bytes = (await netInput(redis)) - before;
  const ms = results.flatMap((r) => r.ms).sort((a, b) => a - b);
  return {
    ...line,
    opsPerSecond: ms.length / SECONDS,
    p50: quantile(ms, 0.5),
    p99: quantile(ms, 0.99),
    bytesPerOp: ms.length === 0 ? Number.NaN : bytes / ms.length,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    load: loadavg()[0] ?? 0,
  };
}

/**
 * With every replica idle: the commands each sends Redis per second (counted in the replica), and
 * the commands Redis runs per second per replica (INFO commandstats: a script's own calls too).
 */
async function idle(redis: Redis, children: ChildProcess[]): Promise<{ sent: number; ran: number }> {
  await redis.flushall();
  await Promise.all(
    children.map((child) => {
      const answer = answerOf(child);
      child.send({ kind: 'idle' });
      return answer;
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const sentNow = async (): Promise<number> => {
    const answers = children.map((child) => answerOf<{ sent: number }>(child));
    for (const child of children) child.send({ kind: 'sent' });
    return (await Promise.all(answers)).reduce((sum, a) => sum + a.sent, 0);
  };
  const [ranBefore, sentBefore] = [await commands(redis), await sentNow()];
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const [ranAfter, sentAfter] = [await commands(redis), await sentNow()];
  const per = (n: number): number => n / IDLE_SECONDS / children.length;
  return { sent: per(sentAfter - sentBefore), ran: per(ranAfter - ranBefore) };
}

const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

function print(
  lines: readonly Line[],
  idles: Map<string, { sent: number; ran: number }>,
  extra: Map<Line, string[]>,
  columns: readonly Column[],
): void {
  const titles = columns.map((c) => ` ${c.title} |`).join('');
  console.log(
    `\n| queue | replicas | waiting | ops/s | p50 ms | p99 ms | bytes in/op | errors | load |${titles}`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|${columns.map(() => '---|').join('')}`);
  for (const l of lines) {
    const cells = (extra.get(l) ?? []).map((c) => ` ${c} |`).join('');
    console.log(
      `| ${l.flavour} | ${l.replicas} | ${l.depth} | ${fixed(l.opsPerSecond, 0)} | ${fixed(l.p50, 2)} | ${fixed(l.p99, 2)} | ${fixed(l.bytesPerOp, 0)} | ${l.errors} | ${fixed(l.load)} |${cells}`,
    );
  }
  console.log(
    '\n| queue | replicas | idle: commands/s a replica sends | idle: commands/s Redis runs per replica |',
  );
  console.log('|---|---|---|---|');
  for (const [key, { sent, ran }] of idles) {
    console.log(`| ${key.replace(':', ' | ')} | ${fixed(sent, 2)} | ${fixed(ran, 2)} |`);
  }
}

async function runFlavour(
  redis: Redis,
  server: RedisProcess,
  tree: string,
  flavour: Flavour,
  out: { lines: Line[]; idles: Map<string, { sent: number; ran: number }>; extra: Map<Line, string[]> },
  columns: readonly Column[],
): Promise<void> {
  for (const count of REPLICAS) {
    const children = await replicas(tree, flavour, server.url, count);
    try {
      for (const depth of DEPTHS) {
        await prefill(redis, tree, flavour, server.url, depth);
        const line = await measure(redis, children, { flavour, replicas: count, depth });
        out.lines.push(line);
        const cells: string[] = [];
        for (const column of columns) cells.push(await column.cell(line, redis));
        out.extra.set(line, cells);
        console.error(
          `${flavour} ${count} replicas ${depth} waiting: ${fixed(line.opsPerSecond, 0)} ops/s ${cells.join(' ')}`,
        );
      }
      out.idles.set(`${flavour}:${count}`, await idle(redis, children));
    } finally {
      for (const child of children) child.kill('SIGKILL');
    }
  }
}

async function main(): Promise<void> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  const baseline = baselineTree();
  const started = performance.now();
  const records = await startSide(ROOT, RECORDS);
  console.error(`${RECORDS} finished builds kept in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const columns = [pageColumn(records)];
  const out = {
    lines: [] as Line[],
    idles: new Map<string, { sent: number; ran: number }>(),
    extra: new Map<Line, string[]>(),
  };
  try {
    console.error(`bench:scale ${new Date().toISOString()}, ${SECONDS} s per line, idle ${IDLE_SECONDS} s`);
    await runFlavour(redis, server, ROOT, 'current', out, columns);
    await runFlavour(redis, server, baseline.root, 'baseline', out, columns);
    print(out.lines, out.idles, out.extra, columns);
  } finally {
    await stopSide(records);
    redis.disconnect();
    baseline.remove();
    await server.dispose();
  }
}

await main();
