// The Redis log writer's recovery after a failed append, on a small fake of the client: an append
// whose answer was lost with its connection (stored, reported as failed) and one that never
// reached Redis. The real server and a real dropped connection: integration/redis-log-store.
import test from 'ava';
import type { Command } from 'ioredis';
import type { RedisClient } from '../../../../src/redis/connection.js';
import { TRUNCATED_MARKER } from '../../../../src/redis/keys.js';
import { createElementSpaces, openRedisLogWriter } from '../../../../src/logs/redis-log-writer.js';
import { eventually } from '../../../helpers/eventually.js';

type Failure = 'before' | 'after' | undefined;

/** The last bulk string of a command's bytes (RESP: `*n`, then `$length` + bytes per argument). */
function lastArgument(frame: Buffer): Buffer {
  let at = frame.indexOf('\r\n') + 2;
  let argument: Buffer = Buffer.alloc(0);
  while (at < frame.length) {
    const end = frame.indexOf('\r\n', at);
    const length = Number(frame.subarray(at + 1, end).toString('latin1'));
    argument = frame.subarray(end + 2, end + 2 + length);
    at = end + 2 + length + 2;
  }
  return argument;
}

/** A list as Redis keeps it; the nth append can fail before or after it is stored. */
function fakeRedis(failAppend: (n: number) => Failure) {
  let list: Buffer[] = [Buffer.alloc(0)];
  let appends = 0;
  let closes = 0;
  const lost = (): Error => new Error('Connection is closed.');
  const client = {
    // The element framed in the command's bytes, copied at the call as the client sends it then.
    sendCommand(command: Command): void {
      appends += 1;
      const failure = failAppend(appends);
      if (failure === 'before') return command.reject(lost());
      // RPUSHX: nothing to a list that is gone (the log was deleted).
      if (list.length === 0) return command.resolve(0);
      list.push(Buffer.from(lastArgument(command.toWritable({}) as Buffer)));
      if (failure === 'after') return command.reject(lost());
      command.resolve(list.length);
    },
    publish: async () => 0,
    multi() {
      const chain = { pexpire: () => chain, publish: () => chain, exec: async () => [] };
      return chain;
    },
    llen: async () => list.length,
    // The close script (KEYS text, meta; ARGV the tail), then the record in the kind's set (one key:
    // nothing beyond retention here).
    async evalsha(
      _sha: string,
      keys: number,
      ...rest: (string | number | Buffer)[]
    ): Promise<number | string[]> {
      if (keys === 1) return [];
      closes += 1;
      list.push(...rest.slice(2).map((piece) => Buffer.from(piece as Buffer)));
      return 1;
    },
  };
  return {
    client: client as unknown as RedisClient,
    text: () => Buffer.concat(list).toString('utf8'),
    appends: () => appends,
    closes: () => closes,
    /** The log deleted by someone else (another replica's DELETE, or retention). */
    remove: () => {
      list = [];
    },
  };
}

/** Until the writer has sent `n` appends (each partial batch goes once the one before is answered). */
async function untilAppends(redis: { appends: () => number }, n: number): Promise<void> {
  await eventually(() => redis.appends() >= n, { what: `${n} appends`, interval: 0 });
}

function writerOn(redis: ReturnType<typeof fakeRedis>, warnings: string[] = []) {
  return openRedisLogWriter({
    client: redis.client,
    id: 'img-00000000-0000-4000-8000-000000000000',
    kind: 'img',
    secrets: ['tok-123456'],
    sizeCapBytes: 50 * 1024 * 1024,
    retention: 10,
    now: () => 0,
    spaces: createElementSpaces(),
    warn: (_fields, message) => void warnings.push(message),
  });
}

for (const failure of ['after', 'before'] as const) {
  test(`an append ${failure === 'after' ? 'stored whose answer was lost is not sent again' : 'that never reached Redis is sent again'}: each line once, in order`, async (t) => {
    const redis = fakeRedis((n) => (n === 2 ? failure : undefined));
    const writer = writerOn(redis);
    writer.write(Buffer.from('first line\n'));
    await untilAppends(redis, 1);
    writer.write(Buffer.from('second line with tok-123456\n'));
    await untilAppends(redis, 2);
    writer.write(Buffer.from('third line\n'));
    await writer.close();
    t.is(redis.text(), 'first line\nsecond line with ***\nthird line\n');
    // The third line went with the close; the second was sent again only when it had not been stored.
    t.is(redis.closes(), 1);
    t.is(redis.appends(), failure === 'after' ? 2 : 3);
  });
}

test('a fast writer streams full elements without waiting for each answer, and the close sends the rest', async (t) => {
  const redis = fakeRedis(() => undefined);
  const writer = writerOn(redis);
  const line = `${'x'.repeat(99)}\n`;
  const chunk = Buffer.from(line.repeat(600));
  // 9.6 MB in one turn: 9 full elements, of which MAX_IN_FLIGHT are sent at once (no answer awaited).
  for (let i = 0; i < 160; i += 1) writer.write(chunk);
  t.is(redis.appends(), 4);
  await writer.close();
  t.is(redis.text(), line.repeat(600 * 160));
  // The 9 full elements as appends, the part-filled last one with the close.
  t.is(redis.appends(), 9);
  t.is(redis.closes(), 1);
});

test('a log deleted while written: its later output is dropped and it is not closed again', async (t) => {
  const redis = fakeRedis(() => undefined);
  const writer = writerOn(redis);
  writer.write(Buffer.from('before the delete\n'));
  await untilAppends(redis, 1);
  redis.remove();
  writer.write(Buffer.from('after the delete\n'));
  await untilAppends(redis, 2);
  writer.write(Buffer.from('dropped\n'));
  await writer.close();
  t.is(redis.text(), '');
  t.is(redis.appends(), 2);
  t.is(redis.closes(), 0);
});

/** A fake whose appends wait to be answered by the test: stored, or stored with the answer lost. */
function heldRedis() {
  const redis = fakeRedis(() => undefined);
  const held: { command: Command; bytes: Buffer }[] = [];
  let appends = 0;
  const client = Object.create(redis.client as object) as RedisClient & {
    sendCommand(command: Command): void;
  };
  const list: Buffer[] = [Buffer.alloc(0)];
  client.sendCommand = (command: Command): void => {
    appends += 1;
    held.push({ command, bytes: Buffer.from(lastArgument(command.toWritable({}) as Buffer)) });
  };
  Object.assign(client, {
    llen: async () => list.length,
    evalsha: async (_sha: string, _keys: number, ...rest: (string | number | Buffer)[]) => {
      list.push(...rest.slice(7).map((piece) => Buffer.from(piece as Buffer)));
      return 1;
    },
  });
  return {
    client,
    appends: () => appends,
    text: () => Buffer.concat(list).toString('utf8'),
    /** Answers the nth append (1-based): stored, its answer delivered or lost. */
    answer(n: number, answer: 'stored' | 'lost') {
      const append = held[n - 1];
      if (append === undefined) throw new Error(`no append ${n}`);
      list.push(append.bytes);
      if (answer === 'lost') append.command.reject(new Error('Connection is closed.'));
      else append.command.resolve(list.length);
    },
  };
}

async function untilState(
  writer: ReturnType<typeof openRedisLogWriter>,
  check: (state: typeof writer.state) => boolean,
): Promise<void> {
  await eventually(() => check(writer.state), {
    interval: 5,
    what: () => `another state than ${JSON.stringify(writer.state)}`,
  });
}

test('the flow after a lost answer: settling while an append is in flight, reconciling, then streaming', async (t) => {
  const redis = heldRedis();
  const writer = openRedisLogWriter({
    client: redis.client,
    id: 'img-00000000-0000-4000-8000-000000000000',
    kind: 'img',
    secrets: [],
    sizeCapBytes: 50 * 1024 * 1024,
    retention: 10,
    now: () => 0,
    spaces: createElementSpaces(),
    warn: () => undefined,
  });
  const line = `${'y'.repeat(1023)}\n`;
  // Two full elements in one turn: both sent before either is answered.
  writer.write(Buffer.from(line.repeat(2048)));
  t.is(redis.appends(), 2);
  t.deepEqual(writer.state, { phase: 'open', flow: 'streaming' });
  redis.answer(1, 'lost');
  await untilState(writer, (state) => state.flow === 'settling');
  writer.write(Buffer.from('held while settling\n'));
  redis.answer(2, 'stored');
  await untilState(writer, (state) => state.flow === 'reconciling');
  t.is(redis.appends(), 2);
  // The list's length says both were stored: nothing is sent again, the held line goes next.
  await untilState(writer, (state) => state.flow === 'streaming');
  await untilAppends(redis, 3);
  redis.answer(3, 'stored');
  const closing = writer.close();
  t.is(writer.state.phase, 'closing');
  await closing;
  t.is(writer.state.phase, 'closed');
  t.is(redis.text(), `${line.repeat(2048)}held while settling\n`);
  t.is(redis.appends(), 3);
});

test('the size cap: the marker once, later output dropped; after the close nothing is stored', async (t) => {
  const redis = fakeRedis(() => undefined);
  const writer = openRedisLogWriter({
    client: redis.client,
    id: 'img-00000000-0000-4000-8000-000000000000',
    kind: 'img',
    secrets: [],
    sizeCapBytes: 20,
    retention: 10,
    now: () => 0,
    spaces: createElementSpaces(),
    warn: () => undefined,
  });
  writer.write('within the cap\n');
  writer.write('beyond the cap\n');
  writer.write('also beyond\n');
  await writer.close();
  writer.write('after the close\n');
  await writer.close();
  t.is(redis.text(), `within the cap\n${TRUNCATED_MARKER}`);
  t.is(redis.closes(), 1);
  t.is(writer.state.phase, 'closed');
});
