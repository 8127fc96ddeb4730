/**
 * The command-log store of Redis mode: any replica reads, follows and deletes any log, logs
 * survive a replica restart, and retention holds across replicas. Only masked text is sent
 * (masking happens here, before anything leaves the process).
 *
 * Keys (prefix `ibs:`): `log:<id>` the text as a list of pieces (an empty one, then one RPUSHX per
 * batch of whole lines: O(1), where APPEND to one growing string copies it again and again),
 * `log:<id>:meta` a hash {kind, state: open|closed}, `logs:<kind>` a sorted set of closed logs
 * scored by close time. Channel `log:<id>` announces appends, the close and the deletion to
 * followers (pub/sub: no polling). Every multi-key step is atomic: an append is one transaction
 * (only to a log that still exists), close + record + prune beyond retention and delete are Lua scripts.
 * An open log whose writer died expires after OPEN_LOG_IDLE_TTL_MS without output.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config/types.js';
import { invalidLogId, logNotFound, storeUnavailable } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { redisScript } from '../redis/script.js';
import { createFollowerHub, type Subscription } from '../redis/subscriptions.js';
import { createLineMasker } from './line-masker.js';
import { configSecrets } from './masking.js';
import { isLogId } from './store.js';
import type { CommandLogWriter, LogKind, LogSnapshot, LogStore } from './types.js';

/** Per-log size cap: output beyond it is dropped, and one marker line says so. */
export const LOG_SIZE_CAP_BYTES = 50 * 1024 * 1024;
export const TRUNCATED_MARKER = '\n[image-build-service: log truncated at 50 MiB; further output dropped]\n';
/** An open log (its writer died with its replica) expires after this long without output. */
export const OPEN_LOG_IDLE_TTL_MS = 24 * 3600 * 1000;
/** One piece carries at most this much (Redis runs one command at a time). */
const APPEND_BATCH_CHARS = 4 * 1024 * 1024;
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
 * Appending is one transaction (MULTI), not a script: large pieces go through Lua at a cost
 * (measured: about 40 % slower). RPUSHX only appends to a list that exists: the list is created
 * with an empty first piece when the log is opened, and a deleted or pruned log has none.
 */
async function appendPiece(client: Redis, id: string, piece: Buffer): Promise<boolean> {
  const replies = await client
    .multi()
    .rpushx(textKey(id), piece)
    .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
    .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
    .publish(channelOf(id), 'a')
    .exec();
  // No replies: the transaction was discarded (the connection went away meanwhile).
  const [err, length] = replies?.[0] ?? [storeUnavailable(), 0];
  if (err) throw err;
  return length !== 0;
}

/**
 * KEYS: text, meta, closed set of its kind. ARGV: id, now ms, retention, key prefix.
 * Marks the log closed (kept without expiry), records it, and deletes the oldest closed logs of
 * its kind beyond retention, announcing each deletion. Returns 0 when the log was deleted meanwhile.
 */
const CLOSE = redisScript(`
if redis.call('HGET', KEYS[2], 'state') ~= 'open' then return 0 end
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
    /** Masked text not yet in Redis, in order (a queue: no copying of the backlog). */
    const unsent: string[] = [];
    let acceptedBytes = 0;
    let truncated = false;
    /** The log was deleted while written: drop everything from now on. */
    let gone = false;
    let giveUpAt = Number.POSITIVE_INFINITY;
    let flushing: Promise<void> | undefined;

    const accept = (text: string): void => {
      if (text === '' || truncated || gone) return;
      const bytes = Buffer.byteLength(text);
      if (acceptedBytes + bytes > sizeCap) {
        truncated = true;
        unsent.push(TRUNCATED_MARKER);
      } else {
        acceptedBytes += bytes;
        unsent.push(text);
      }
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
    };

    /** Sends what is unsent, one piece at a time (what arrives meanwhile goes in the next batch). */
    async function flush(): Promise<void> {
      let delay = RETRY_MIN_MS;
      while (unsent.length > 0 && !gone) {
        // Whole queued texts up to the batch size (at least one).
        let count = 0;
        let chars = 0;
        while (
          count < unsent.length &&
          (count === 0 || chars + (unsent[count]?.length ?? 0) <= APPEND_BATCH_CHARS)
        ) {
          chars += unsent[count]?.length ?? 0;
          count += 1;
        }
        // As bytes: encoded once here; the client writes them as they are.
        const piece = Buffer.from(unsent.slice(0, count).join(''));
        try {
          const appended = await appendPiece(connection.client, id, piece);
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

    return {
      id,
      write(chunk) {
        accept(masker.push(chunk));
      },
      addSecrets(more) {
        masker.addSecrets(more);
      },
      async close() {
        giveUpAt = Date.now() + CLOSE_FLUSH_DEADLINE_MS;
        accept(masker.end());
        while (flushing) await flushing;
        if (gone) return;
        for (;;) {
          try {
            await CLOSE.run(
              connection.client,
              [textKey(id), metaKey(id), closedKey(kind)],
              [id, now(), deps.config.commandLogRetention, PREFIX],
            );
            return;
          } catch (err) {
            if (Date.now() >= giveUpAt) {
              logger.warn(
                { logId: id, problem: (err as Error).message },
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
