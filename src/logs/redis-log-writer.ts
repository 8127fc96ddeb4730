/**
 * The writing side of a Redis command log: masking, batched appends, recovery and the close, on
 * the store's connection for appends.
 *
 * Output is masked as bytes (whole lines: line-masker.ts) and copied into list elements of up to
 * ELEMENT_BYTES, each in a reused buffer with room for its command around it, so that the element
 * goes to Redis as it lies (redis/framed-command.ts): one copy per byte, no fresh memory. Each
 * element is one RPUSHX, only to a log that still exists. Full elements go as soon as they are
 * full, up to MAX_IN_FLIGHT unanswered (a fast writer streams); a part-filled one goes once nothing
 * is in flight, so a follower sees output within a round trip. After a failed append the list's
 * length tells what was stored (one writer per log), so output is stored once and in order. The
 * close (its last element + closed + record + prune beyond retention) is one Lua script. The size
 * cap is counted here, by the one writer of a log.
 */
import type { Redis } from 'ioredis';
import { FRAME_HEAD_ROOM, FRAME_TAIL_ROOM, framedCommand } from '../redis/framed-command.js';
import { redisScript } from '../redis/script.js';
import { createLineMasker } from './line-masker.js';
import {
  channelOf,
  closedKey,
  metaKey,
  OPEN_LOG_IDLE_TTL_MS,
  PREFIX,
  textKey,
  TRUNCATED_MARKER,
} from './redis-log-keys.js';
import type { LogKind } from './types.js';

/**
 * A list element (and so one append) holds at most this much. Measured (50 MB of appends to a
 * local redis-server): Redis stores 1 MiB elements for about half the CPU of 64 KiB ones and less
 * than 4 MiB ones (fewer allocations and fresh pages); 512 KiB and 2 MiB capture as fast as 1 MiB.
 * A follower reads a bounded number of them per round trip.
 */
const ELEMENT_BYTES = 1024 * 1024;
/** An open log's expiry is pushed back with an append at most this often (it is a day long). */
const TTL_REFRESH_MS = 60_000;
/**
 * Appends sent before the first is answered. With Redis on the same machine 1, 2 and 4 measure the
 * same (bench:redis is CPU-bound); across a network each answer costs a round trip, which this hides.
 */
const MAX_IN_FLIGHT = 4;
/** After close, unsent output is retried this long while Redis is unreachable, then dropped (logged). */
const CLOSE_FLUSH_DEADLINE_MS = 10_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 1000;

/** One list element: its bytes lie in `space` from FRAME_HEAD_ROOM on, kept until it is stored. */
interface Element {
  readonly space: Buffer;
  length: number;
}

/**
 * Appends one element (RPUSHX: only to a list that exists; the list is created with an empty first
 * element when the log is opened, and a deleted or pruned log has none), framed in its space. The
 * TTL refresh and the followers' wake-up follow on the same connection, so Redis runs them right
 * after the append; they are best effort (the next append or the close repeats both). Resolves
 * false when the log no longer exists.
 */
async function appendElement(
  client: Redis,
  id: string,
  element: Element,
  refreshTtl: boolean,
): Promise<boolean> {
  const command = framedCommand('rpushx', [textKey(id)], element.space, element.length);
  void client.sendCommand(command);
  // Best effort: a failure here is repeated by the next append or the close.
  const after = (
    refreshTtl
      ? client
          .multi()
          .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
          .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
          .publish(channelOf(id), 'a')
          .exec()
      : client.publish(channelOf(id), 'a')
  ).catch(() => undefined);
  const length = (await command.promise) as number;
  await after;
  return length !== 0;
}

/**
 * KEYS: text, meta, closed set of its kind. ARGV: id, now ms, retention, key prefix, then the last
 * pieces of output (often none). Appends them, marks the log closed (kept without expiry), records
 * it, and deletes the oldest closed logs of its kind beyond retention, announcing each deletion.
 * Returns 0 when the log was deleted (or closed) meanwhile.
 */
const CLOSE = redisScript(`
if redis.call('HGET', KEYS[2], 'state') ~= 'open' then return 0 end
for i = 5, #ARGV do redis.call('RPUSHX', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[2], 'state', 'closed')
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('PUBLISH', KEYS[1], 'c')
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[3])
if excess > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[3], excess)
  for i = 1, #oldest, 2 do
    local key = ARGV[4] .. 'log:' .. oldest[i]
    redis.call('DEL', key, key .. ':meta')
    redis.call('PUBLISH', key, 'd')
  end
end
return 1
`);

export interface RedisLogWriterOptions {
  /** The connection for appends (fails fast while Redis is unreachable). */
  readonly client: Redis;
  /** An open log: its keys were made by the store's open(). */
  readonly id: string;
  readonly kind: LogKind;
  /** Every secret to mask (the server's own and the request's). */
  readonly secrets: readonly string[];
  readonly sizeCapBytes: number;
  /** Closed logs kept per kind. */
  readonly retention: number;
  /** Milliseconds since the epoch (close time). */
  readonly now: () => number;
  /** Where elements are built (the store's one pool). */
  readonly spaces: ElementSpaces;
  /** Output that could not be stored (Redis stayed unreachable): said once, by the caller's logger. */
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
}

/** The writing side of one log; `close` never throws. */
export interface RedisLogWriter {
  write(chunk: string | Uint8Array): void;
  addSecrets(secrets: readonly string[]): void;
  close(): Promise<void>;
}

const TRUNCATED_BYTES = Buffer.from(TRUNCATED_MARKER);

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const bytesOf = (element: Element): Buffer =>
  element.space.subarray(FRAME_HEAD_ROOM, FRAME_HEAD_ROOM + element.length);

export function openRedisLogWriter(options: RedisLogWriterOptions): RedisLogWriter {
  const { client, id, kind, warn, spaces } = options;
  const masker = createLineMasker(options.secrets);
  /** The element being filled (not yet full). */
  let filling: Element | undefined;
  /** Elements complete and not yet sent, in order. */
  const ready: Element[] = [];
  /** Appends sent and not yet known to be stored, in the order sent (one connection: Redis runs them in that order). */
  const sent: Sent[] = [];
  /** List elements known to be stored (the empty first one, then each stored append's). */
  let stored = 1;
  let acceptedBytes = 0;
  let truncated = false;
  /** The log was deleted while written: drop everything from now on. */
  let gone = false;
  /**
   * After a failed append nothing is sent until what was stored is known again: `waiting` for the
   * appends in flight to settle, then `reconciling` (reconcile()).
   */
  let recovery: 'none' | 'waiting' | 'reconciling' = 'none';
  let partialSoon = false;
  /** The open log's expiry was last pushed back then (by open(), just before). */
  let ttlRefreshedAt = Date.now();
  /** From close() on, the last element goes with the close itself. */
  let closing = false;
  let giveUpAt = Number.POSITIVE_INFINITY;
  let closed: Promise<void> | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const resolve of waiters) resolve();
    waiters.clear();
  };
  const changed = (): Promise<void> => new Promise((resolve) => waiters.add(resolve));

  const release = (elements: readonly Element[]): void => {
    for (const element of elements) spaces.give(element.space);
  };
  const dropUnsent = (): void => {
    release(ready.splice(0));
    if (filling !== undefined) release([filling]);
    filling = undefined;
  };
  /** The element being filled is complete (fill() never leaves one empty). */
  const seal = (): void => {
    if (filling !== undefined) ready.push(filling);
    filling = undefined;
  };

  /** Copies masked output into elements (no reference to the caller's bytes is kept). */
  const fill = (bytes: Buffer): void => {
    let from = 0;
    while (from < bytes.length) {
      filling ??= { space: spaces.take(), length: 0 };
      const end = Math.min(bytes.length, from + ELEMENT_BYTES - filling.length);
      filling.length += bytes.copy(filling.space, FRAME_HEAD_ROOM + filling.length, from, end);
      from = end;
      if (filling.length === ELEMENT_BYTES) seal();
    }
  };

  function send(element: Element): void {
    const entry: Sent = { element, state: 'sending' };
    sent.push(entry);
    const now = Date.now();
    const refreshTtl = now - ttlRefreshedAt >= TTL_REFRESH_MS;
    if (refreshTtl) ttlRefreshedAt = now;
    appendElement(client, id, element, refreshTtl)
      .then(
        (exists) => {
          entry.state = 'stored';
          if (!exists) gone = true;
        },
        () => {
          entry.state = 'failed';
        },
      )
      .finally(settled);
  }

  /**
   * Sends what may go now: full elements while fewer than MAX_IN_FLIGHT are unanswered (a fast
   * writer's output streams without waiting for each answer); a part-filled one only when nothing
   * is in flight, on the next turn of the event loop (the writes of this turn go with it). While
   * closing, every element but the last, which goes with the close.
   */
  function pump(): void {
    if (gone || recovery !== 'none') return;
    while (sent.length < MAX_IN_FLIGHT && ready.length > (closing ? 1 : 0)) send(ready.shift() as Element);
    if (!closing && sent.length === 0 && filling !== undefined) sendPartialSoon();
  }

  function sendPartialSoon(): void {
    if (partialSoon) return;
    partialSoon = true;
    setImmediate(() => {
      partialSoon = false;
      if (closing || gone || recovery !== 'none' || sent.length > 0) return;
      seal();
      pump();
    });
  }

  function settled(): void {
    while (sent[0]?.state === 'stored') {
      release([(sent.shift() as Sent).element]);
      stored += 1;
    }
    if (gone) dropUnsent();
    if (recovery === 'none' && sent.some((entry) => entry.state === 'failed')) recovery = 'waiting';
    if (recovery === 'waiting' && sent.every((entry) => entry.state !== 'sending')) {
      recovery = 'reconciling';
      void reconcile();
    } else pump();
    wake();
  }

  /**
   * After a failed append (Redis unreachable, or an answer lost with its connection), once every
   * append in flight is settled: the list's length tells which of them were stored (they are stored
   * in order), and the others go back to the front of the queue, so that output is stored once and
   * in order. Retried with backoff; after close, gives up at its deadline (said once).
   */
  async function reconcile(): Promise<void> {
    let delay = RETRY_MIN_MS;
    for (;;) {
      if (Date.now() >= giveUpAt) {
        const dropped = sent.length + ready.length + (filling === undefined ? 0 : 1);
        warn(
          { logId: id, droppedElements: dropped },
          'command log output lost: the shared store (Redis) stayed unreachable',
        );
        // Not reused: an append that timed out may still be waiting in the connection's buffer.
        sent.length = 0;
        ready.length = 0;
        filling = undefined;
        break;
      }
      await wait(delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
      let length: number;
      try {
        length = await client.llen(textKey(id));
      } catch {
        continue;
      }
      if (length === 0) {
        // Deleted (or expired) meanwhile.
        gone = true;
        release(sent.splice(0).map((entry) => entry.element));
        dropUnsent();
        break;
      }
      const landed = length - stored;
      const entries = sent.splice(0);
      release(entries.slice(0, landed).map((entry) => entry.element));
      ready.unshift(...entries.slice(landed).map((entry) => entry.element));
      stored = length;
      break;
    }
    recovery = 'none';
    pump();
    wake();
  }

  const accept = (masked: Buffer): void => {
    if (masked.length === 0 || truncated || gone) return;
    if (acceptedBytes + masked.length > options.sizeCapBytes) {
      truncated = true;
      fill(TRUNCATED_BYTES);
    } else {
      acceptedBytes += masked.length;
      fill(masked);
    }
    if (!closing) pump();
  };

  async function closeLog(): Promise<void> {
    closing = true;
    giveUpAt = Date.now() + CLOSE_FLUSH_DEADLINE_MS;
    for (const rest of masker.end()) accept(rest);
    seal();
    pump();
    // Appends in flight are answered first (order); all but the last element go as appends.
    while (!gone && (sent.length > 0 || recovery !== 'none' || ready.length > 1)) await changed();
    if (gone) return;
    const last = ready.splice(0);
    const tail = last.map(bytesOf);
    try {
      for (;;) {
        try {
          // Idempotent: a close retried after a lost answer finds the log closed and changes nothing.
          await CLOSE.run(
            client,
            [textKey(id), metaKey(id), closedKey(kind)],
            [id, options.now(), options.retention, PREFIX, ...tail],
          );
          return;
        } catch (err) {
          if (Date.now() >= giveUpAt) {
            warn(
              { logId: id, droppedElements: tail.length, problem: (err as Error).message },
              'command log left open: the shared store (Redis) stayed unreachable',
            );
            return;
          }
          await wait(RETRY_MAX_MS);
        }
      }
    } finally {
      release(last);
    }
  }

  return {
    write(chunk) {
      for (const lines of masker.push(chunk)) accept(lines);
    },
    addSecrets(more) {
      masker.addSecrets(more);
    },
    close() {
      closed ??= closeLog();
      return closed;
    },
  };
}

/** An append sent: its element (kept until it is known to be stored) and what became of it. */
interface Sent {
  readonly element: Element;
  state: 'sending' | 'stored' | 'failed';
}

/**
 * Reusable buffers that elements are built in (with room for their command around them), taken
 * back once stored: copying into memory already in use costs less than fresh allocations. Made
 * once per store; at most `keepIdle` are kept between builds.
 */
export interface ElementSpaces {
  take(): Buffer;
  give(space: Buffer): void;
}

export function createElementSpaces(keepIdle = 2 * MAX_IN_FLIGHT): ElementSpaces {
  const idle: Buffer[] = [];
  return {
    take: () => idle.pop() ?? Buffer.allocUnsafeSlow(FRAME_HEAD_ROOM + ELEMENT_BYTES + FRAME_TAIL_ROOM),
    give(space) {
      if (idle.length < keepIdle) idle.push(space);
    },
  };
}
