// The Redis log store against a real redis-server of the test's own (no stack needed): two stores
// on two connections stand for two replicas.
import test from 'ava';
import { Redis } from 'ioredis';
import { isServiceError } from '../../src/errors/errors.js';
import { createRedisLogStore, TRUNCATED_MARKER, type RedisLogStore } from '../../src/logs/redis-store.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { closedKey, textKey } from '../../src/redis/keys.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { readyConnection, useRedisServer } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';
import { eventually } from '../helpers/eventually.js';

const redis = useRedisServer();

interface Replica {
  store: RedisLogStore;
  connection: RedisConnection;
}

async function replica(
  t: { teardown: (fn: () => Promise<void>) => void },
  options: {
    retention?: number;
    sizeCapBytes?: number;
    secret?: string;
    server?: RedisProcess;
    logger?: ReturnType<typeof silentLogger>;
  } = {},
): Promise<Replica> {
  const server = options.server ?? redis();
  const connection = await readyConnection(server, options.logger);
  const store = createRedisLogStore({
    config: {
      logs: { retention: options.retention ?? 100 },
      gitCredentials: options.secret
        ? [{ host: 'h', kind: 'https', username: 'u', token: options.secret }]
        : [],
      registryAuth: { auths: {} },
      redis: { url: server.url },
    },
    connection,
    logger: options.logger ?? silentLogger(),
    ...(options.sizeCapBytes === undefined ? {} : { sizeCapBytes: options.sizeCapBytes }),
  });
  t.teardown(async () => {
    await store.close();
    await connection.close();
  });
  return { store, connection };
}

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return isServiceError(err) ? err.code : String(err);
  }
};

test('a log written through one replica is read whole and complete from another, and survives the writer', async (t) => {
  const a = await replica(t);
  const log = await a.store.open('git');
  log.write('Cloning into x...\n');
  log.write(Buffer.from('done\npartial'));
  const b = await replica(t);
  t.false((await b.store.read(log.id)).complete);
  await log.close();
  await a.store.close();
  await a.connection.close();
  t.deepEqual(await b.store.read(log.id), { text: 'Cloning into x...\ndone\npartial', complete: true });
  // A "restarted" replica (a new store on a new connection) still reads it: nothing is wiped.
  const c = await replica(t);
  t.is((await c.store.read(log.id)).text, 'Cloning into x...\ndone\npartial');
});

test('secrets are masked before they reach Redis', async (t) => {
  const secret = 'tok-0123456789abcdef';
  const a = await replica(t, { secret });
  const log = await a.store.open('img', ['per-request-pass']);
  log.write(`token ${secret.slice(0, 8)}`);
  log.write(`${secret.slice(8)} and per-request-pass\n`);
  await log.close();
  const raw = new Redis(redis().url);
  t.teardown(() => raw.disconnect());
  const keys = await raw.keys('*');
  t.true(keys.length >= 2);
  for (const key of keys) {
    const type = await raw.type(key);
    // Deleted meanwhile by another test of this file.
    if (type === 'none') continue;
    const dump =
      type === 'list'
        ? (await raw.lrange(key, 0, -1)).join('')
        : type === 'hash'
          ? JSON.stringify(await raw.hgetall(key))
          : type === 'zset'
            ? (await raw.zrange(key, '0', '-1')).join(' ')
            : `unexpected type ${type}`;
    t.false(dump.startsWith('unexpected'), `${key}: ${dump}`);
    t.false(dump.includes(secret), key);
    t.false(dump.includes('per-request-pass'), key);
  }
  t.is((await a.store.read(log.id)).text, 'token *** and ***\n');
});

test('a DELETE through one replica makes the log 404 on the others; unknown and invalid ids', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const log = await a.store.open('git');
  log.write('x\n');
  await log.close();
  await b.store.remove(log.id);
  t.is(await codeOf(a.store.read(log.id)), 'LOG_NOT_FOUND');
  t.is(await codeOf(a.store.remove(log.id)), 'LOG_NOT_FOUND');
  t.is(await codeOf(a.store.read('git-../../etc')), 'INVALID_LOG_ID');
});

test('retention per kind holds across replicas: the oldest closed logs of a kind go first', async (t) => {
  // A server of its own: the other tests' logs would count.
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const raw = new Redis(server.url);
  t.teardown(() => raw.disconnect());
  const a = await replica(t, { retention: 2, server });
  const b = await replica(t, { retention: 2, server });
  const ids: string[] = [];
  for (const store of [a.store, b.store, a.store, b.store]) {
    const log = await store.open('img');
    log.write(`${ids.length}\n`);
    await log.close();
    ids.push(log.id);
  }
  t.is(await codeOf(b.store.read(ids[0] ?? '')), 'LOG_NOT_FOUND');
  t.is(await codeOf(a.store.read(ids[1] ?? '')), 'LOG_NOT_FOUND');
  t.is((await a.store.read(ids[2] ?? '')).text, '2\n');
  t.is((await b.store.read(ids[3] ?? '')).text, '3\n');
  t.is(await raw.zcard(closedKey('img')), 2);
});

test('a follower on another replica receives output before the log is closed, then ends', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const log = await a.store.open('img');
  log.write('first\n');
  const stream = await b.store.follow(log.id);
  const iterator = stream[Symbol.asyncIterator]();
  let received = '';
  while (!received.includes('first\n')) {
    const next = await iterator.next();
    t.false(next.done);
    received += Buffer.from(next.value as Uint8Array).toString('utf8');
  }
  t.false((await b.store.read(log.id)).complete);
  log.write('second\n');
  while (!received.includes('second\n')) {
    const next = await iterator.next();
    t.false(next.done);
    received += Buffer.from(next.value as Uint8Array).toString('utf8');
  }
  await log.close();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    received += Buffer.from(next.value).toString('utf8');
  }
  t.is(received, 'first\nsecond\n');
});

/** Everything a follower receives until the log ends, decoded once at the end (bytes may split a character). */
async function followedText(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const piece of stream) parts.push(Buffer.from(piece));
  return Buffer.concat(parts).toString('utf8');
}

test('output of mixed sizes (single lines, large chunks, a multi-byte split) is read and followed byte for byte', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const log = await a.store.open('img');
  const followed = followedText(await b.store.follow(log.id));
  let expected = '';
  const write = (text: string | Buffer): void => {
    log.write(text);
    expected += typeof text === 'string' ? text : text.toString('utf8');
  };
  for (let i = 0; i < 500; i += 1) write(`step ${i}\n`);
  write(`${'x'.repeat(200_000)}\n`);
  // A UTF-8 character split across two writes.
  const accent = Buffer.from('caf\u00e9\n');
  log.write(accent.subarray(0, 4));
  log.write(accent.subarray(4));
  expected += 'caf\u00e9\n';
  for (let i = 0; i < 300; i += 1) write(`${'y'.repeat(i * 37)}\n`);
  await log.close();
  t.is((await b.store.read(log.id)).text, expected);
  t.is(await followed, expected);
});

test('a character that straddles two list elements (1 MiB each) is read and followed whole', async (t) => {
  const a = await replica(t);
  const b = await replica(t);
  const log = await a.store.open('img');
  const followed = followedText(await b.store.follow(log.id));
  // Two-byte characters from an odd offset on: every even offset, 1 MiB among them, is inside one.
  const expected = `a${'\u00e9'.repeat(600_000)}\n`;
  log.write(expected);
  await log.close();
  const { text } = await b.store.read(log.id);
  t.is(text.length, expected.length);
  t.true(text === expected, 'read whole');
  t.true((await followed) === expected, 'followed whole');
});

test('the append connection dropped while a log is written: the output is stored once and in order', async (t) => {
  const warnings: { role?: string; msg: string }[] = [];
  const logger = silentLogger();
  logger.warn = ((fields: { role?: string }, msg: string) =>
    void warnings.push({ ...fields, msg })) as typeof logger.warn;
  // A server of this test's own: the other tests' connections are not dropped.
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const a = await replica(t, { logger, server });
  const log = await a.store.open('img');
  const raw = new Redis(server.url);
  const appended = new Redis(server.url);
  t.teardown(() => {
    raw.disconnect();
    appended.disconnect();
  });
  await appended.subscribe(textKey(log.id));
  const firstAppend = new Promise((resolve) => appended.once('message', resolve));
  let expected = '';
  const write = (from: number, to: number): void => {
    for (let i = from; i < to; i += 1) {
      const line = `line ${i} ${'z'.repeat(i % 700)}\n`;
      log.write(Buffer.from(line));
      expected += line;
    }
  };
  write(0, 4000);
  await firstAppend;
  // Every other client's connection is dropped: the appends' too, with appends in flight
  // or about to be sent; what follows is written while it reconnects.
  await raw.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  write(4000, 12_000);
  await log.close();
  t.true(
    warnings.some((w) => w.role === 'log appends' && /connection lost/.test(w.msg)),
    JSON.stringify(warnings),
  );
  await eventually(() => a.connection.probe(), { what: 'Redis to answer again' });
  const { text, complete } = await a.store.read(log.id);
  t.true(complete);
  t.is(text.length, expected.length);
  t.true(text === expected, 'the stored text differs from what was written');
});

test('output beyond the size cap is dropped with one marker line', async (t) => {
  const a = await replica(t, { sizeCapBytes: 100 });
  const log = await a.store.open('git');
  for (let i = 0; i < 50; i += 1) log.write('0123456789\n');
  await log.close();
  const { text } = await a.store.read(log.id);
  t.is(text, `${'0123456789\n'.repeat(9)}${TRUNCATED_MARKER}`);
});

test('Redis down: reading and deleting fail with STORE_UNAVAILABLE, opening waits; back up: all work again', async (t) => {
  const server = await startRedis();
  t.teardown(() => server.dispose());
  const a = await replica(t, { server });
  const before = await a.store.open('git');
  before.write('kept\n');
  await before.close();
  await server.stop();
  // A build that runs opens its logs through a short outage (a failover, maxmemory): tried again.
  const opening = a.store.open('git');
  t.is(await codeOf(a.store.read(before.id)), 'STORE_UNAVAILABLE');
  t.is(await codeOf(a.store.remove(before.id)), 'STORE_UNAVAILABLE');
  t.is(await codeOf(a.store.follow(before.id)), 'STORE_UNAVAILABLE');
  t.false(await a.connection.probe());
  await server.start();
  // The client reconnects on its own (no new store, no restart).
  await eventually(() => a.connection.probe(), { what: 'Redis to answer again' });
  const during = await opening;
  during.write('opened while Redis was down\n');
  await during.close();
  t.is((await a.store.read(during.id)).text, 'opened while Redis was down\n');
  const after = await a.store.open('git');
  after.write('again\n');
  await after.close();
  t.is((await a.store.read(after.id)).text, 'again\n');
});
