/**
 * The command-log store of Redis mode: any replica reads, follows and deletes any log, logs
 * survive a replica restart, and retention holds across replicas. Keys and limits:
 * redis-log-keys.ts. Reading, following (pub/sub on the log's channel: no polling) and deleting
 * run here; writing runs on the append thread (append-worker.ts: masking, encoding and batched
 * appends beside the event loop; only masked text is sent). Delete is a Lua script. An open log
 * whose writer died expires after OPEN_LOG_IDLE_TTL_MS without output.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/types.js';
import { invalidLogId, logNotFound } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { redisScript } from '../redis/script.js';
import { createFollowerHub, type Subscription } from '../redis/subscriptions.js';
import { startAppendWorker } from './append-worker.js';
import { configSecrets } from './masking.js';
import {
  channelOf,
  LOG_SIZE_CAP_BYTES,
  metaKey,
  OPEN_LOG_IDLE_TTL_MS,
  PREFIX,
  textKey,
} from './redis-log-keys.js';
import { isLogId } from './store.js';
import type { LogSnapshot, LogStore } from './types.js';

export { LOG_SIZE_CAP_BYTES, TRUNCATED_MARKER } from './redis-log-keys.js';

/** Pieces a follower reads per round trip. */
const FOLLOW_PIECES = 64;

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
  /** Lets the closes under way finish, then stops the append thread and the followers' connection. */
  close(): Promise<void>;
}

export interface RedisLogStoreDeps {
  readonly config: Pick<Config, 'commandLogRetention' | 'gitCredentials' | 'registryAuth'> & {
    readonly redisUrl: string;
  };
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'duplicate'>;
  /** Receives what the append thread has to say (connection changes, output it could not store). */
  readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** The per-log cap (default LOG_SIZE_CAP_BYTES; tests pass a small one). */
  readonly sizeCapBytes?: number;
}

export function createRedisLogStore(deps: RedisLogStoreDeps): RedisLogStore {
  const { connection } = deps;
  const { redisUrl, commandLogRetention } = deps.config;
  const serverSecrets = configSecrets(deps.config);
  const followers = createFollowerHub(connection);
  const appender = startAppendWorker(
    { redisUrl, retention: commandLogRetention, sizeCapBytes: deps.sizeCapBytes ?? LOG_SIZE_CAP_BYTES },
    deps.logger,
  );

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
      return appender.writer(id, kind, [...serverSecrets, ...secrets]);
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

    async close() {
      await appender.close();
      await followers.close();
    },
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
}
