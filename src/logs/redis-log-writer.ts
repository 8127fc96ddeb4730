/**
 * The writing side of a Redis command log: masking, batched appends, recovery and the close, on
 * the store's connection for appends.
 *
 * Output is masked as bytes (whole lines: line-masker.ts), queued as it came (no copy), and sent in
 * batches: one RPUSHX each, only to a log that still exists. Whole batches go as soon as they are
 * full, up to MAX_IN_FLIGHT unanswered (a fast writer streams); less than a batch goes once nothing
 * is in flight, so a follower sees output within a round trip. After a failed append the list's
 * length tells what was stored (one writer per log), so output is stored once and in order. The
 * close (its last output + closed + record + prune beyond retention) is one Lua script. The size
 * cap is counted here, by the one writer of a log.
 */
import type { Redis } from 'ioredis';
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

/** One append carries at most this much (Redis runs one command at a time). */
const APPEND_BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Output written in small pieces (a line at a time) is joined into elements of at least this size:
 * a follower reads a bounded number of elements per round trip. Larger pieces are sent as they are.
 */
const MIN_ELEMENT_BYTES = 256 * 1024;
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

/**
 * Appends whole-line pieces: one RPUSHX (only to a list that exists: the list is created with an
 * empty first piece when the log is opened, and a deleted or pruned log has none), sent on its own
 * so that the client copies the bytes once (a MULTI or pipeline concatenates every command's bytes
 * again: measured, a third less capture throughput; a script copies them into Lua and back: about
 * 40 % less). The TTL refresh and the followers' wake-up follow on the same connection, so Redis
 * runs them right after the append; they are best effort (the next append or the close repeats
 * both). Resolves false when the log no longer exists.
 */
async function appendPieces(
  client: Redis,
  id: string,
  pieces: readonly Buffer[],
  refreshTtl: boolean,
): Promise<boolean> {
  const appended = client.rpushx(textKey(id), ...pieces);
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
  const length = await appended;
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
  /** The command connection (fails fast while Redis is unreachable). */
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
  /** Where small pieces are joined (the store's one pool). */
  readonly spaces: JoinSpaces;
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

export function openRedisLogWriter(options: RedisLogWriterOptions): RedisLogWriter {
  const { client, id, kind, warn, spaces } = options;
  const masker = createLineMasker(options.secrets);
  /** Masked output not yet sent, in order (a queue: no copying of the backlog). */
  const unsent: Buffer[] = [];
  let unsentBytes = 0;
  /** Appends sent and not yet known to be stored, in the order sent (one connection: Redis runs them in that order). */
  const sent: Batch[] = [];
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
  /** From close() on, the close sends what is left (with the close itself when it fits one batch). */
  let closing = false;
  let giveUpAt = Number.POSITIVE_INFINITY;
  let closed: Promise<void> | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const resolve of waiters) resolve();
    waiters.clear();
  };
  const changed = (): Promise<void> => new Promise((resolve) => waiters.add(resolve));

  const dropUnsent = (): void => {
    unsent.length = 0;
    unsentBytes = 0;
  };

  /** How many queued pieces the next batch takes: whole pieces up to the batch size (at least one). */
  const nextBatch = (): number => {
    let count = 0;
    let bytes = 0;
    while (
      count < unsent.length &&
      (count === 0 || bytes + (unsent[count]?.length ?? 0) <= APPEND_BATCH_BYTES)
    ) {
      bytes += unsent[count]?.length ?? 0;
      count += 1;
    }
    return count;
  };

  function send(count: number): void {
    const pieces = unsent.splice(0, count);
    for (const piece of pieces) unsentBytes -= piece.length;
    const space = spaces.take();
    const elements = elementsOf(pieces, space);
    const batch: Batch = { pieces, elements: elements.length, state: 'sending' };
    sent.push(batch);
    const now = Date.now();
    const refreshTtl = now - ttlRefreshedAt >= TTL_REFRESH_MS;
    if (refreshTtl) ttlRefreshedAt = now;
    appendPieces(client, id, elements, refreshTtl)
      .then(
        (exists) => {
          batch.state = 'stored';
          if (!exists) gone = true;
        },
        () => {
          batch.state = 'failed';
        },
      )
      .finally(() => {
        spaces.give(space);
        settled();
      });
  }

  /**
   * Sends what may go now: whole batches while fewer than MAX_IN_FLIGHT are unanswered (a fast
   * writer's output streams without waiting for each answer); less than a batch only when nothing
   * is in flight, on the next turn of the event loop (the writes of this turn go with it). While
   * closing, everything but the last batch, which goes with the close.
   */
  function pump(): void {
    if (gone || recovery !== 'none') return;
    while (sent.length < MAX_IN_FLIGHT && unsent.length > 0) {
      const count = nextBatch();
      if (closing ? count === unsent.length : unsentBytes < APPEND_BATCH_BYTES) break;
      send(count);
    }
    if (!closing && sent.length === 0 && unsent.length > 0) sendPartialSoon();
  }

  function sendPartialSoon(): void {
    if (partialSoon) return;
    partialSoon = true;
    setImmediate(() => {
      partialSoon = false;
      if (!closing && !gone && recovery === 'none' && sent.length === 0 && unsent.length > 0)
        send(nextBatch());
    });
  }

  function settled(): void {
    while (sent[0]?.state === 'stored') stored += (sent.shift() as Batch).elements;
    if (gone) dropUnsent();
    if (recovery === 'none' && sent.some((batch) => batch.state === 'failed')) recovery = 'waiting';
    if (recovery === 'waiting' && sent.every((batch) => batch.state !== 'sending')) {
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
        const dropped = sent.reduce((n, batch) => n + batch.pieces.length, unsent.length);
        warn(
          { logId: id, droppedPieces: dropped },
          'command log output lost: the shared store (Redis) stayed unreachable',
        );
        sent.length = 0;
        dropUnsent();
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
        sent.length = 0;
        dropUnsent();
        break;
      }
      let landed = length - stored;
      const again: Buffer[] = [];
      for (const batch of sent.splice(0)) {
        if (landed >= batch.elements) landed -= batch.elements;
        else again.push(...batch.pieces);
      }
      stored = length;
      unsent.unshift(...again);
      for (const piece of again) unsentBytes += piece.length;
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
      unsent.push(TRUNCATED_BYTES);
      unsentBytes += TRUNCATED_BYTES.length;
    } else {
      acceptedBytes += masked.length;
      unsent.push(masked);
      unsentBytes += masked.length;
    }
    if (!closing) pump();
  };

  async function closeLog(): Promise<void> {
    closing = true;
    giveUpAt = Date.now() + CLOSE_FLUSH_DEADLINE_MS;
    for (const rest of masker.end()) accept(rest);
    pump();
    // Appends in flight are answered first (order); a backlog beyond one batch goes as appends.
    while (!gone && (sent.length > 0 || recovery !== 'none' || nextBatch() < unsent.length)) await changed();
    if (gone) return;
    const space = spaces.take();
    const tail = elementsOf(unsent.splice(0), space);
    unsentBytes = 0;
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
              { logId: id, droppedPieces: tail.length, problem: (err as Error).message },
              'command log left open: the shared store (Redis) stayed unreachable',
            );
            return;
          }
          await wait(RETRY_MAX_MS);
        }
      }
    } finally {
      spaces.give(space);
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

/** One append: its pieces (kept until it is known to be stored) and how many list elements it adds. */
interface Batch {
  readonly pieces: readonly Buffer[];
  readonly elements: number;
  state: 'sending' | 'stored' | 'failed';
}

/**
 * Reusable buffers that small pieces are joined in, one per append in flight, taken back once its
 * answer came: the joining copies into memory already in use instead of fresh allocations (which
 * cost more than the copy). Made once per store.
 */
export interface JoinSpaces {
  take(): Buffer;
  give(space: Buffer): void;
}

export function createJoinSpaces(keepIdle = MAX_IN_FLIGHT): JoinSpaces {
  const idle: Buffer[] = [];
  return {
    take: () => idle.pop() ?? Buffer.allocUnsafe(APPEND_BATCH_BYTES),
    give(space) {
      if (idle.length < keepIdle) idle.push(space);
    },
  };
}

/**
 * The list elements for queued pieces: runs of small pieces joined (in `space` while it has room),
 * large ones as they are (no copy). Redis stores a few large elements for much less than many
 * small ones, and a follower reads a bounded number of them per round trip.
 */
function elementsOf(pieces: readonly Buffer[], space: Buffer): Buffer[] {
  const elements: Buffer[] = [];
  let used = 0;
  let run: Buffer[] = [];
  let runBytes = 0;
  const endRun = (): void => {
    if (run.length === 1) elements.push(run[0] as Buffer);
    else if (run.length > 1 && used + runBytes <= space.length) {
      const start = used;
      for (const piece of run) used += piece.copy(space, used);
      elements.push(space.subarray(start, used));
    } else if (run.length > 1) elements.push(Buffer.concat(run, runBytes));
    run = [];
    runBytes = 0;
  };
  for (const piece of pieces) {
    if (piece.length >= MIN_ELEMENT_BYTES) {
      endRun();
      elements.push(piece);
      continue;
    }
    run.push(piece);
    runBytes += piece.length;
    if (runBytes >= MIN_ELEMENT_BYTES) endRun();
  }
  endRun();
  return elements;
}
