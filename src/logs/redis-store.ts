/**
 * The command-log store of Redis mode: any replica reads, follows and deletes any log, logs
 * survive a replica restart, and retention holds across replicas. Only masked text is sent
 * (masking happens here, before anything leaves the process).
 *
 * Keys (prefix `ibs:`): `log:<id>` the text as a list of pieces of whole lines (an empty one, then
 * the pieces of each batch: O(1), where APPEND to one growing string copies it again and again),
 * `log:<id>:meta` a hash {kind, state: open|closed}, `logs:<kind>` a sorted set of closed logs
 * scored by close time. Channel `log:<id>` announces appends, the close and the deletion to
 * followers (pub/sub: no polling). Writing: output is masked and encoded once, queued, and sent
 * a batch at a time (one RPUSHX, only to a log that still exists; what arrives meanwhile goes in the
 * next batch, so a follower sees output within a round trip and a fast writer gets large batches).
 * Close (its last output + closed + record + prune beyond retention) and delete are Lua scripts.
 * The size cap is counted by the one writer of a log. An open log whose writer died expires after
 * OPEN_LOG_IDLE_TTL_MS without output.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config/types.js';
import { invalidLogId, logNotFound } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { redisScript } from '../redis/script.js';
import { createFollowerHub, type Subscription } from '../redis/subscriptions.js';
import { createLineMasker } from './line-masker.js';
import { createPieceEncoder } from './piece-encoder.js';
import { configSecrets } from './masking.js';
import { isLogId } from './store.js';
import type { CommandLogWriter, LogKind, LogSnapshot, LogStore } from './types.js';

/** Per-log size cap: output beyond it is dropped, and one marker line says so. */
export const LOG_SIZE_CAP_BYTES = 50 * 1024 * 1024;
export const TRUNCATED_MARKER = '\n[image-build-service: log truncated at 50 MiB; further output dropped]\n';
/** An open log (its writer died with its replica) expires after this long without output. */
export const OPEN_LOG_IDLE_TTL_MS = 24 * 3600 * 1000;
/** One append carries at most this much (Redis runs one command at a time). */
const APPEND_BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Output written in small pieces (a line at a time) is joined into elements of at least this size:
 * a follower reads FOLLOW_PIECES elements per round trip. Larger pieces are sent as they are.
 */
const MIN_ELEMENT_BYTES = 16 * 1024;
/** Output is encoded into slabs growing from this size to the next (piece-encoder.ts). */
const SLAB_MIN_BYTES = 16 * 1024;
const SLAB_MAX_BYTES = 1024 * 1024;
/** After close, unsent output is retried this long while Redis is unreachable, then dropped (logged). */
const CLOSE_FLUSH_DEADLINE_MS = 10_000;
/** Pieces a follower reads per round trip. */
const FOLLOW_PIECES = 64;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 1000;

const PREFIX = 'ibs:';
const textKey = (id: string): string => `${PREFIX}log:${id}`;
const metaKey = (id: string): string => `${PREFIX}log:${id}:meta`;
const closedKey = (kind: string): string => `${PREFIX}logs:${kind}`;
const channelOf = textKey;

/**
 * Appends whole-line pieces: one RPUSHX (only to a list that exists: the list is created with an
 * empty first piece when the log is opened, and a deleted or pruned log has none), sent on its own
 * so that the client copies the bytes once (a MULTI or pipeline concatenates every command's bytes
 * again: measured, a third less capture throughput; a script copies them into Lua and back: about
 * 40 % less). The TTL refresh and the followers' wake-up follow on the same connection, so Redis
 * runs them right after the append; they are best effort (the next append or the close repeats
 * both). Resolves false when the log no longer exists.
 */
async function appendPieces(client: Redis, id: string, pieces: readonly Buffer[]): Promise<boolean> {
  const appended = client.rpushx(textKey(id), ...pieces);
  const after = client
    .multi()
    .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
    .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
    .publish(channelOf(id), 'a')
    .exec()
    .catch(() => undefined);
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

/** KEYS: text, meta. ARGV: id, key prefix. Returns 0 for an unknown log. */
const REMOVE = redisScript(`
local kind = redis.call('HGET', KEYS[2], 'kind')
if not kind then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', ARGV[2] .. 'logs:' .. kind, ARGV[1])
redis.call('PUBLISH', KEYS[1], 'd')
return 1
`);

export interface RedisLogStore extends LogStore {
  /** Stops the followers' subscription connection. */
  close(): Promise<void>;
}

export interface RedisLogStoreDeps {
  readonly config: Pick<Config, 'commandLogRetention' | 'gitCredentials' | 'registryAuth' | 'redisUrl'>;
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'duplicate'>;
  readonly logger: Pick<Logger, 'warn'>;
  /** Milliseconds since the epoch (close time). */
  readonly now?: () => number;
  /** The per-log cap (default LOG_SIZE_CAP_BYTES; tests pass a small one). */
  readonly sizeCapBytes?: number;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createRedisLogStore(deps: RedisLogStoreDeps): RedisLogStore {
  const { connection, logger } = deps;
  const now = deps.now ?? Date.now;
  const sizeCap = deps.sizeCapBytes ?? LOG_SIZE_CAP_BYTES;
  const serverSecrets = configSecrets(deps.config);
  const followers = createFollowerHub(connection);

  const checked = (id: string): string => {
    if (!isLogId(id)) throw invalidLogId(id);
    return id;
  };

  async function read(id: string): Promise<LogSnapshot> {
    checked(id);
    const [state, text] = await connection.call(async (client) => {
      const replies = await client.multi().hget(metaKey(id), 'state').lrange(textKey(id), 0, -1).exec();
      return (replies ?? []).map(([err, value]) => {
        if (err) throw err;
        return value;
      }) as [string | null, string[]];
    });
    if (state === null || state === undefined) throw logNotFound(id);
    return { text: text.join(''), complete: state !== 'open' };
  }

  return {
    async open(kind, secrets = []) {
      const id = `${kind}-${randomUUID()}`;
      await connection.call((client) =>
        client
          .multi()
          .hset(metaKey(id), { kind, state: 'open' })
          .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
          // The empty first piece makes the list exist (appends use RPUSHX).
          .rpush(textKey(id), '')
          .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
          .exec(),
      );
      return openWriter({ id, kind, secrets: [...serverSecrets, ...secrets] });
    },

    read,

    async follow(id, signal) {
      checked(id);
      // Subscribe first: nothing stored after the first read can be missed.
      const subscription = await connection.call(() => followers.subscribe(channelOf(id)));
      try {
        const state = await connection.call((client) => client.hget(metaKey(id), 'state'));
        if (state === null) throw logNotFound(id);
      } catch (err) {
        subscription.release();
        throw err;
      }
      return followLog(id, subscription, signal);
    },

    async remove(id) {
      checked(id);
      const removed = await connection.call((client) =>
        REMOVE.run(client, [textKey(id), metaKey(id)], [id, PREFIX]),
      );
      if (removed === 0) throw logNotFound(id);
    },

    close: () => followers.close(),
  };

  async function* followLog(
    id: string,
    subscription: Subscription,
    signal?: AbortSignal,
  ): AsyncGenerator<Uint8Array> {
    let next = 0;
    try {
      while (!signal?.aborted) {
        // The version before reading: a change meanwhile makes the wait below return at once.
        const seen = subscription.version();
        const [state, pieces] = await connection.call(async (client) => {
          const replies = await client
            .multi()
            .hget(metaKey(id), 'state')
            .lrangeBuffer(textKey(id), next, next + FOLLOW_PIECES - 1)
            .exec();
          return (replies ?? []).map(([err, value]) => {
            if (err) throw err;
            return value;
          }) as [string | null, Buffer[]];
        });
        if (pieces.length > 0) {
          next += pieces.length;
          const bytes = Buffer.concat(pieces);
          if (bytes.length > 0) yield bytes;
          continue;
        }
        // Closed (complete) or deleted: nothing more will come.
        if (state !== 'open') return;
        await subscription.changeSince(seen, signal);
      }
    } finally {
      subscription.release();
    }
  }

  function openWriter(log: { id: string; kind: LogKind; secrets: readonly string[] }): CommandLogWriter {
    const { id, kind } = log;
    const masker = createLineMasker(log.secrets);
    /** Masked output, encoded once; taken into `unsent` when a batch is made. */
    const encoder = createPieceEncoder(SLAB_MIN_BYTES, SLAB_MAX_BYTES);
    /** Masked output not yet in Redis, in order (a queue: no copying of the backlog). */
    const unsent: Buffer[] = [];
    let acceptedBytes = 0;
    let truncated = false;
    /** The log was deleted while written: drop everything from now on. */
    let gone = false;
    let giveUpAt = Number.POSITIVE_INFINITY;
    let flushing: Promise<void> | undefined;
    /** From close() on, the close sends what is left (with the close itself when it fits one batch). */
    let closing = false;

    const accept = (text: string): void => {
      if (text === '' || truncated || gone) return;
      const bytes = Buffer.byteLength(text);
      if (acceptedBytes + bytes > sizeCap) {
        truncated = true;
        encoder.push(TRUNCATED_MARKER, Buffer.byteLength(TRUNCATED_MARKER));
      } else {
        acceptedBytes += bytes;
        encoder.push(text, bytes);
      }
      if (closing) return;
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
    };

    /** How many queued pieces the next batch takes: whole pieces up to the batch size (at least one). */
    const nextBatch = (): number => {
      unsent.push(...encoder.take());
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

    /** Appends batches while `more()` holds, each once the one before is answered; retries until giveUpAt. */
    async function appendWhile(more: () => boolean): Promise<void> {
      let delay = RETRY_MIN_MS;
      for (;;) {
        const count = nextBatch();
        if (count === 0 || gone || !more()) return;
        try {
          const appended = await appendPieces(connection.client, id, elementsOf(unsent.slice(0, count)));
          unsent.splice(0, count);
          if (!appended) gone = true;
          delay = RETRY_MIN_MS;
        } catch (err) {
          if (Date.now() >= giveUpAt) {
            logger.warn(
              { logId: id, droppedPieces: unsent.length, problem: (err as Error).message },
              'command log output lost: the shared store (Redis) stayed unreachable',
            );
            unsent.length = 0;
            return;
          }
          await wait(delay);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
        }
      }
    }

    /**
     * Sends what is unsent (what arrives meanwhile goes in the next batch). It starts on the next
     * turn of the event loop: the writes of this turn go in one batch, and a close in this turn
     * (a command's last line, then its log's close) sends them with the close: one round trip.
     */
    async function flush(): Promise<void> {
      await new Promise((resolve) => setImmediate(resolve));
      await appendWhile(() => !closing);
    }

    return {
      id,
      write(chunk) {
        accept(masker.push(chunk));
      },
      addSecrets(more) {
        masker.addSecrets(more);
      },
      async close() {
        closing = true;
        giveUpAt = Date.now() + CLOSE_FLUSH_DEADLINE_MS;
        accept(masker.end());
        // A batch in flight is answered first (order); a backlog beyond one batch goes as appends.
        while (flushing) await flushing;
        await appendWhile(() => nextBatch() < unsent.length);
        unsent.push(...encoder.take());
        if (gone) return;
        const tail = elementsOf(unsent.splice(0));
        for (;;) {
          try {
            // Idempotent: a close retried after a lost answer finds the log closed and changes nothing.
            await CLOSE.run(
              connection.client,
              [textKey(id), metaKey(id), closedKey(kind)],
              [id, now(), deps.config.commandLogRetention, PREFIX, ...tail],
            );
            return;
          } catch (err) {
            if (Date.now() >= giveUpAt) {
              logger.warn(
                { logId: id, droppedPieces: tail.length, problem: (err as Error).message },
                'command log left open: the shared store (Redis) stayed unreachable',
              );
              return;
            }
            await wait(RETRY_MAX_MS);
          }
        }
      },
    };
  }
}

/** The list elements for queued pieces: runs of small pieces joined, large ones as they are (no copy). */
function elementsOf(pieces: readonly Buffer[]): Buffer[] {
  const elements: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  const endRun = (): void => {
    if (run.length > 0) elements.push(run.length === 1 ? (run[0] as Buffer) : Buffer.concat(run, runBytes));
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
