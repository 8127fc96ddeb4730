/**
 * Benchmark (not a test): how much Redis memory the service's shared state takes per item, to size
 * Redis for N repositories (docs/redis.md, Sizing). No stack needed: its own redis-server, and one
 * service process whose builder and git server never answer.
 *
 *   npm run bench:redis-sizing [-- queued=500 records=300 lines=20000]
 *
 * Measured through the service itself (HTTP, and the log store's own module), so the figures
 * follow whatever structure the queue and the records have: INFO memory's used_memory before and
 * after N items (and the keys added), per item.
 *   - a queued build: N async builds waiting behind one whose clone never ends (MAX_CONCURRENT 1);
 *   - a finished record: N builds whose clone is refused at once (each with its one-line clone log,
 *     which the figure includes: a build always has its logs);
 *   - a log line: one log of L lines of 100 bytes (masked text as stored), and an empty log.
 * Prints the machine, the date and the load with the table.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { createRedisLogStore } from '../src/logs/redis-store.js';
import { createRedisConnection } from '../src/redis/connection.js';
import { startRedis } from '../test/helpers/redis-process.js';
import { spawnService } from '../test/helpers/service-process.js';
import { eventually } from '../test/helpers/eventually.js';
import { silentLogger } from '../test/helpers/silent-logger.js';

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 1));
};
const QUEUED = arg('queued', 500);
const RECORDS = arg('records', 300);
const LINES = arg('lines', 20_000);

/** A TCP endpoint that accepts and never answers (a builder and a git server that hang). */
async function silent(): Promise<{ server: Server; port: number }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.once('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

async function usedMemory(raw: Redis): Promise<{ bytes: number; keys: number }> {
  const info = await raw.info('memory');
  return { bytes: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 'NaN'), keys: await raw.dbsize() };
}

interface Figure {
  readonly what: string;
  readonly items: number;
  readonly bytes: number;
  readonly keys: number;
}

/** POST /build; a 429 (the slot of the build before is freed a moment after its answer) is retried. */
async function post(url: string, body: unknown, async: boolean): Promise<number> {
  for (;;) {
    const res = await fetch(`${url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(async ? { Prefer: 'respond-async' } : {}) },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status !== 429) return res.status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const build = (repository: string, i: number) => ({
  repository,
  image: { registry: 'registry.invalid:5000', name: `sizing/app-${i}` },
});

/** Queued builds and finished records, through one service process. */
async function throughService(raw: Redis, url: string, hang: number): Promise<Figure[]> {
  // First, with the slot free: each failing build runs at once and leaves its finished record. One
  // before measuring makes the service's connections (their buffers are not a record's).
  await post(url, build('https://127.0.0.1:1/warm.git', 0), false);
  const refused = await usedMemory(raw);
  for (let i = 0; i < RECORDS; i += 1) {
    // Port 1 refuses at once: the build fails in its clone and its record is kept finished.
    const status = await post(url, build(`https://127.0.0.1:1/r-${i}.git`, i), false);
    if (status !== 500) throw new Error(`a failing build answered ${status}`);
  }
  const finished = await usedMemory(raw);
  const figures: Figure[] = [
    {
      what: 'finished record (with its clone log)',
      items: RECORDS,
      bytes: finished.bytes - refused.bytes,
      keys: finished.keys - refused.keys,
    },
  ];
  // One build holds the only slot (its clone never ends); the others wait in the queue.
  if ((await post(url, build(`https://127.0.0.1:${hang}/hold.git`, 0), true)) !== 202)
    throw new Error('the holding build was not accepted');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // One queued before measuring: the queue's structures exist, as in a running service.
  if ((await post(url, build(`https://127.0.0.1:${hang}/warm.git`, 0), true)) !== 202)
    throw new Error('the first queued build was not accepted');
  const before = await usedMemory(raw);
  for (let i = 1; i <= QUEUED; i += 1) {
    const status = await post(url, build(`https://127.0.0.1:${hang}/q-${i}.git`, i), true);
    if (status !== 202) throw new Error(`queued build ${i} answered ${status}`);
  }
  const queued = await usedMemory(raw);
  figures.push({
    what: 'queued build',
    items: QUEUED,
    bytes: queued.bytes - before.bytes,
    keys: queued.keys - before.keys,
  });
  return figures;
}

/** A log of LINES lines of 100 bytes, and an empty log, through the log store. */
async function logFigures(raw: Redis, url: string): Promise<Figure[]> {
  const connection = createRedisConnection({ kind: 'server', url }, silentLogger());
  await eventually(() => connection.client.status === 'ready', { what: 'the connection' });
  const store = createRedisLogStore({
    config: { logs: { retention: 1000 }, gitCredentials: [], registryAuth: { auths: {} }, redis: {} },
    connection,
    logger: silentLogger(),
  });
  try {
    // A first log makes every connection of the store (their buffers are not a log's).
    const first = await store.open('git');
    await first.close();
    const empty = await usedMemory(raw);
    const none = await store.open('git');
    await none.close();
    const opened = await usedMemory(raw);
    const log = await store.open('img');
    const line = `${'x'.repeat(99)}\n`;
    for (let i = 0; i < LINES; i += 1) log.write(line);
    await log.close();
    const written = await usedMemory(raw);
    const perLog = opened.bytes - empty.bytes;
    return [
      { what: 'empty log (closed)', items: 1, bytes: perLog, keys: opened.keys - empty.keys },
      { what: 'log line (100 bytes)', items: LINES, bytes: written.bytes - opened.bytes - perLog, keys: 0 },
    ];
  } finally {
    await store.close();
    await connection.close();
  }
}

function print(figures: readonly Figure[]): void {
  const redisVersion = spawn('redis-server', ['--version']);
  let version = '';
  redisVersion.stdout.on('data', (chunk: Buffer) => (version += chunk.toString()));
  console.log(`date: ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}); load ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
  console.log('| item | items | bytes per item (used_memory) | keys per item |');
  console.log('|---|---|---|---|');
  for (const f of figures)
    console.log(
      `| ${f.what} | ${f.items} | ${Math.round(f.bytes / f.items)} | ${(f.keys / f.items).toFixed(2)} |`,
    );
  redisVersion.on('close', () => console.log(`redis: ${version.trim()}`));
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const hang = await silent();
  const raw = new Redis(redis.url);
  const service = spawnService(['--port', '0'], {
    REDIS_URL: redis.url,
    BUILDER_ENDPOINT: `tcp://127.0.0.1:${hang.port}`,
    MAX_CONCURRENT_BUILDS: '1',
    MAX_QUEUED_BUILDS: String(QUEUED + 10),
    BUILD_HISTORY: String(RECORDS + 10),
    COMMAND_LOG_RETENTION: String(RECORDS + 10),
  });
  try {
    const listening = await service.waitForLog('listening');
    const url = `http://127.0.0.1:${String(listening.port)}`;
    const figures = [...(await throughService(raw, url, hang.port)), ...(await logFigures(raw, redis.url))];
    print(figures);
  } finally {
    await service.lose().catch(() => undefined);
    raw.disconnect();
    hang.server.close();
    hang.server.emit('close');
    await redis.dispose();
  }
}

void main();
