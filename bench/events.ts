/**
 * Benchmark (not a test): events (docs/events.md), in each mode, in one run.
 *
 *   npx tsx bench/events.ts [events=100]    (npm run bench:events)
 *
 * - Recording: the time a build's answer waits on its events being recorded, i.e. the worker's
 *   awaited listener (EventService.onBuildEnded: build.finished and artifact.published of a
 *   successful build, filtered, written to the journal) from its call to its return. Target: under
 *   5 ms median.
 * - Delivery delay: from that same call (the build's recorded finish) to the build.finished event's
 *   arrival at a real HTTP receiver on 127.0.0.1 (signed, POSTed by the delivery loop). The path from
 *   the recorded finish on is the one a real build takes; no build runs, so the figures are the
 *   events' own. Sequential (one finish, its delivery, the next) and a burst (all finishes at once,
 *   delivered in order behind each other).
 * Embedded mode: the file journal in a temp dir. Redis mode: a redis-server of its own (loopback).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { EventService } from '../src/events/events.js';
import { openFileJournal, openRedisJournal, type OpenedJournal } from '../src/events/journal.js';
import type { EndedBuild } from '../src/events/types.js';
import { EventMetrics } from '../src/observability/event-metrics.js';
import { createRedisConnection } from '../src/redis/connection.js';
import { startRedis } from '../test/helpers/redis-process.js';
import { silentLogger } from '../test/helpers/silent-logger.js';
import { eventually } from '../test/helpers/eventually.js';

const EVENTS = Number(process.argv[2] ?? 100);
const MODES = ['embedded', 'redis'] as const;

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
};
const ms = (v: number): string => `${v.toFixed(2)} ms`;

/** A receiver answering 204: when each build's build.finished event arrived (performance.now()). */
async function receiver(): Promise<{ url: string; arrived: Map<string, number>; close: () => void }> {
  const arrived = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        type: string;
        data: { subject: { id: string } };
      };
      if (event.type.includes('build.finished')) arrived.set(event.data.subject.id, performance.now());
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, arrived, close: () => server.close() };
}

const ended = (id: string): EndedBuild => ({
  id,
  requestId: `req-${id}`,
  repository: 'https://git.example/team/app.git',
  branch: 'main',
  commit: 'c0ffee',
  image: 'registry.example:5000/team/app:c0ffee',
  phase: 'finished',
  startedAt: new Date().toISOString(),
  elapsedSeconds: 12,
  imageBuildLogId: 'img-1',
  gitCloneLogId: 'git-1',
  builder: 'tcp://buildkit-0:1234',
  waiters: 1,
  status: 'success',
  durationSeconds: 12,
  answer: {
    status: 200,
    body: {
      image: 'registry.example:5000/team/app:c0ffee',
      registry: 'registry.example:5000',
      name: 'team/app',
      tag: 'c0ffee',
      commit: 'c0ffee',
      digest: `sha256:${'ab'.repeat(32)}`,
      imageBuildLogId: 'img-1',
    },
  },
});

async function until(check: () => boolean): Promise<void> {
  await eventually(check, { timeout: 120_000, interval: 0 });
}

interface Figures {
  record: number[];
  sequential: number[];
  burst: number[];
}

async function measure(
  mode: (typeof MODES)[number],
  opened: OpenedJournal,
  url: string,
  arrived: Map<string, number>,
): Promise<Figures> {
  const events = new EventService({
    config: {
      observability: { serviceName: 'bench' },
      events: {
        subscriptions: [{ name: 'bench', url, secrets: [`whsec_${Buffer.alloc(32, 3).toString('base64')}`] }],
        retrySeconds: [1],
      },
    },
    ...opened,
    metrics: new EventMetrics(new Registry()),
    logger: silentLogger(),
  }).start();
  const figures: Figures = { record: [], sequential: [], burst: [] };
  for (let i = 0; i < EVENTS; i++) {
    const id = `bld-${mode}-seq-${i}`;
    const started = performance.now();
    await events.onBuildEnded(ended(id));
    figures.record.push(performance.now() - started);
    await until(() => arrived.has(id));
    figures.sequential.push((arrived.get(id) ?? 0) - started);
  }
  const starts = new Map<string, number>();
  await Promise.all(
    Array.from({ length: EVENTS }, async (_, i) => {
      const id = `bld-${mode}-burst-${i}`;
      starts.set(id, performance.now());
      await events.onBuildEnded(ended(id));
    }),
  );
  await until(() => [...starts.keys()].every((id) => arrived.has(id)));
  for (const [id, started] of starts) figures.burst.push((arrived.get(id) ?? 0) - started);
  await events.close();
  return figures;
}

async function main(): Promise<void> {
  const target = await receiver();
  const dir = await mkdtemp(join(tmpdir(), 'ibs-bench-events-'));
  const redis = await startRedis();
  const connection = createRedisConnection({ kind: 'server', url: redis.url }, silentLogger());
  await until(() => connection.client.status === 'ready');
  console.log(`events: ${EVENTS} finished builds per mode (2 events each), one receiver on 127.0.0.1`);
  for (const mode of MODES) {
    const opened =
      mode === 'embedded'
        ? await openFileJournal(dir, ['bench'])
        : await openRedisJournal(connection, ['bench']);
    const f = await measure(mode, opened, target.url, target.arrived);
    console.log(
      `${mode.padEnd(8)} answer waits on recording: median ${ms(quantile(f.record, 0.5))}, p99 ${ms(quantile(f.record, 0.99))}`,
    );
    console.log(
      `${mode.padEnd(8)} build end to delivery, one at a time: median ${ms(quantile(f.sequential, 0.5))}, p99 ${ms(quantile(f.sequential, 0.99))}`,
    );
    console.log(
      `${mode.padEnd(8)} build end to delivery, ${EVENTS} at once: median ${ms(quantile(f.burst, 0.5))}, p99 ${ms(quantile(f.burst, 0.99))}`,
    );
  }
  await connection.close();
  await redis.dispose();
  target.close();
  await rm(dir, { recursive: true, force: true });
}

await main();
