/**
 * The command-log store of Redis mode: any replica reads, follows (pub/sub, no polling) and deletes
 * any log; logs survive a restart and retention holds across replicas (docs/redis.md). Keys and
 * limits: src/redis/keys.ts. Writing is redis-log-writer.ts, on a connection of the writers' own, so
 * their large commands never queue the requests' commands behind them. Delete is a Lua script on the
 * log's keys, then the removal from its kind's closed set.
 */
import type { Config } from '../config/types.js';
import { ERROR_CLASSES, serviceError } from '../errors/errors.js';
import { retryAfterDelays } from '../errors/retry.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection, RedisClient } from '../redis/connection.js';
import { createSubscriptionHub, type SubscriptionHub, type Subscription } from '../redis/subscriptions.js';
import { configSecrets } from '../secrets/masking.js';
import {
  channelOf,
  closedKey,
  LOG_SIZE_CAP_BYTES,
  metaKey,
  OPEN_LOG_IDLE_TTL_MS,
  textKey,
} from '../redis/keys.js';
import { DROP } from './redis-log-commands.js';
import { createElementSpaces, openRedisLogWriter, type ElementSpaces } from './redis-log-writer.js';
import { isLogId, newLogId } from './log-id.js';
import type { CommandLogWriter, LogKind, LogSnapshot, LogStore } from './types.js';

export { TRUNCATED_MARKER } from '../redis/keys.js';

/** List elements (up to 1 MiB each: redis-log-writer.ts) a follower reads per round trip. */
const FOLLOW_ELEMENTS = 16;

export interface RedisLogStore extends LogStore {
  /** Lets the closes under way finish, then stops the followers' subscriptions. */
  close(): Promise<void>;
}

export interface RedisLogStoreDeps {
  /** The limits, and the server's secrets to mask (Redis: only its password matters here). */
  readonly config: Pick<Config, 'logs' | 'gitCredentials' | 'registryAuth'> & {
    readonly redis: Pick<Config['redis'], 'url' | 'password'>;
  };
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'duplicate' | 'subscriber'>;
  /** Output that could not be stored (Redis stayed unreachable after a log's close). */
  readonly logger: Pick<Logger, 'warn'>;
  /** The per-log cap (default LOG_SIZE_CAP_BYTES; tests pass a small one). */
  readonly sizeCapBytes?: number;
}

/** The store's parts: the connections, the followers' hub, the element pool, the closes under way. */
interface RedisLogs {
  readonly deps: RedisLogStoreDeps;
  readonly serverSecrets: readonly string[];
  readonly followers: SubscriptionHub;
  /** The writers' own connection. */
  readonly appends: RedisClient;
  readonly spaces: ElementSpaces;
  /** Logs being closed (the store's close waits for them). */
  readonly closing: Set<Promise<void>>;
}

const checked = (id: string): string => {
  if (!isLogId(id)) throw serviceError('INVALID_LOG_ID', { id });
  return id;
};

/** The state of log `id` and its list elements from `from` to `to` (inclusive; -1: the last). */
async function readElements(
  logs: RedisLogs,
  id: string,
  from: number,
  to: number,
): Promise<[string | null, Buffer[]]> {
  return logs.deps.connection.call(async (client) => {
    const replies = await client
      .multi()
      .hget(metaKey(id), 'state')
      .lrangeBuffer(textKey(id), from, to)
      .exec();
    return (replies ?? []).map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [string | null, Buffer[]];
  });
}

/**
 * The waits before each new try to open a log while the store refuses it (about half a minute in
 * all, as a queued build's adoption and a finish): Redis at maxmemory or failing over must not fail
 * a build that runs. A try repeated after one that landed adds an empty piece: nothing shown.
 */
const OPEN_RETRIES_MS = [250, 500, 1000, 2000, 4000, 8000, 16_000];

async function open(logs: RedisLogs, kind: LogKind, secrets: readonly string[]): Promise<CommandLogWriter> {
  const id = newLogId(kind);
  const create = () =>
    logs.deps.connection.call((client) =>
      client
        .multi()
        .hset(metaKey(id), { kind, state: 'open' })
        .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
        // The empty first piece makes the list exist (appends use RPUSHX).
        .rpush(textKey(id), '')
        .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
        .exec(),
    );
  await retryAfterDelays(create, {
    delaysMs: OPEN_RETRIES_MS,
    retries: (err) => err instanceof ERROR_CLASSES.STORE_UNAVAILABLE,
  });
  return writer(logs, id, kind, [...logs.serverSecrets, ...secrets]);
}

function writer(logs: RedisLogs, id: string, kind: LogKind, secrets: readonly string[]): CommandLogWriter {
  const { deps, closing } = logs;
  const log = openRedisLogWriter({
    client: logs.appends,
    id,
    kind,
    secrets,
    sizeCapBytes: deps.sizeCapBytes ?? LOG_SIZE_CAP_BYTES,
    retention: deps.config.logs.retention,
    now: Date.now,
    spaces: logs.spaces,
    warn: (fields: Record<string, unknown>, message: string) => deps.logger.warn(fields, message),
  });
  return {
    id,
    write: (chunk) => log.write(chunk),
    addSecrets: (more) => log.addSecrets(more),
    close() {
      const closed = log.close().finally(() => closing.delete(closed));
      closing.add(closed);
      return closed;
    },
  };
}

async function read(logs: RedisLogs, id: string): Promise<LogSnapshot> {
  checked(id);
  const [state, text] = await readElements(logs, id, 0, -1);
  if (state === null || state === undefined) throw serviceError('LOG_NOT_FOUND', {}, { logId: id });
  // Decoded whole: an element may end inside a character that the next one completes.
  return { text: Buffer.concat(text).toString('utf8'), complete: state !== 'open' };
}

async function follow(logs: RedisLogs, id: string, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
  checked(id);
  const { connection } = logs.deps;
  // Subscribe first: nothing stored after the first read can be missed.
  const subscription = await connection.call(() => logs.followers.subscribe(channelOf(id)));
  try {
    const state = await connection.call((client) => client.hget(metaKey(id), 'state'));
    if (state === null) throw serviceError('LOG_NOT_FOUND', {}, { logId: id });
  } catch (err) {
    subscription.release();
    throw err;
  }
  return followLog(logs, id, subscription, signal);
}

async function* followLog(
  logs: RedisLogs,
  id: string,
  subscription: Subscription,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  let next = 0;
  try {
    while (!signal?.aborted) {
      // The version before reading: a change meanwhile makes the wait below return at once.
      const seen = subscription.version();
      const [state, elements] = await readElements(logs, id, next, next + FOLLOW_ELEMENTS - 1);
      if (elements.length > 0) {
        next += elements.length;
        const bytes = Buffer.concat(elements);
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

export function createRedisLogStore(deps: RedisLogStoreDeps): RedisLogStore {
  const { connection } = deps;
  const logs: RedisLogs = {
    deps,
    serverSecrets: configSecrets(deps.config),
    followers: createSubscriptionHub(connection),
    appends: connection.duplicate('log appends'),
    spaces: createElementSpaces(),
    closing: new Set(),
  };
  return {
    open: (kind, secrets = []) => open(logs, kind, secrets),
    read: (id) => read(logs, id),
    follow: (id, signal) => follow(logs, id, signal),
    async remove(id) {
      checked(id);
      // The log's keys go first (one slot), then its entry in its kind's set (another): a failure
      // between leaves an entry that retention drops with nothing left to delete.
      const kind = await connection.call((client) => DROP.run(client, [textKey(id), metaKey(id)], []));
      if (typeof kind !== 'string') throw serviceError('LOG_NOT_FOUND', {}, { logId: id });
      await connection.call((client) => client.zrem(closedKey(kind), id));
    },
    async close() {
      await Promise.all(logs.closing);
      await logs.followers.close();
    },
  };
}
