/**
 * The Redis connection of Redis mode: one object made at start-up by src/stores.ts, to one server, to
 * a Redis Cluster (ioredis' Cluster client: it learns the slots and follows MOVED and ASK) or to the
 * primary that Redis Sentinels name (ioredis asks them again after a failover).
 * Commands fail fast while Redis is unreachable (no offline queue: the caller answers 503 instead
 * of hanging), the client reconnects on its own, and `probe()` tells readiness whether Redis answers
 * right now. The password is never logged: state changes are logged by endpoint only.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { redisView, type RedisTarget } from '../config/redis-target.js';
import { isServiceError, reasonOf, serviceError } from '../errors/errors.js';
import { maskSecrets, redisSecrets, secretVariants } from '../secrets/masking.js';
import type { Logger } from '../observability/logger.js';
import { clusterSubscriber } from './node-subscriber.js';
import { replyCode } from './reply-code.js';

/** A client of either kind: the commands both answer, their status and events. */
export type RedisClient = Redis | Cluster;

/** A command unanswered this long fails (the request answers 503). */
const COMMAND_TIMEOUT_MS = 5000;
const CONNECT_TIMEOUT_MS = 3000;
/** Readiness: a PING unanswered this long means Redis is unavailable. */
const PROBE_TIMEOUT_MS = 2000;
/** Reconnect attempts back off up to this delay, forever. */
const MAX_RECONNECT_DELAY_MS = 1000;

/** Options of a connection that differ by role. */
type RoleOptions = Pick<RedisOptions, 'enableOfflineQueue' | 'autoResubscribe' | 'commandTimeout'>;

/** Subscribers wait for the connection, without timeout, and subscribe again on every reconnection. */
const SUBSCRIBER: RoleOptions = {
  enableOfflineQueue: true,
  autoResubscribe: true,
  commandTimeout: undefined,
};

export interface RedisConnection {
  /** Commands; each fails at once while disconnected. */
  readonly client: RedisClient;
  /**
   * Another connection with the command connection's options (log appends, so that their large
   * commands never queue the requests' commands behind them), named `role` in log lines and closed
   * with this one.
   */
  duplicate(role: string): RedisClient;
  /**
   * A connection for SUBSCRIBE only, named `role` in log lines and closed with this one: commands
   * wait for the connection; channels are subscribed again on every reconnection. To a Cluster, a
   * plain connection to one node at a time (every node hears every PUBLISH), moving to the next
   * configured node on each reconnection, with the same backoff as the other connections.
   */
  subscriber(role: string): Redis;
  /** Whether Redis answers a PING now (readiness). Never throws. */
  probe(): Promise<boolean>;
  /**
   * Runs store commands: any failure that is not already a ServiceError becomes STORE_UNAVAILABLE
   * (503): Redis unreachable, or refusing writes at `maxmemory` (its `OOM` reply, logged as such).
   */
  call<T>(fn: (client: RedisClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Who a connection's log lines name, and the secrets masked in them. */
interface Watcher {
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  readonly where: { readonly redis: ReturnType<typeof redisView> };
  readonly variants: ReturnType<typeof secretVariants>;
  /** Closed on purpose: the connections' ends are not problems. */
  readonly closing: () => boolean;
}

/** Logs `client`'s state changes by endpoint and `role`: one line per distinct problem. */
function watch<C extends RedisClient>(client: C, role: string, watcher: Watcher): C {
  const { logger, where, variants } = watcher;
  let up = false;
  /** The problems logged since the last connection (a node each, when nodes are tried in turn). */
  const problems = new Set<string>();
  client.on('ready', () => {
    up = true;
    problems.clear();
    logger.info({ ...where, role }, 'redis connected');
  });
  client.on('error', (err: unknown) => {
    // One line per distinct problem, not one per reconnect attempt.
    const problem = maskSecrets(reasonOf(err), variants);
    if (problems.has(problem)) return;
    problems.add(problem);
    logger.warn({ ...where, role, problem }, 'redis unavailable');
  });
  client.on('close', () => {
    if (!up || watcher.closing()) return;
    up = false;
    logger.warn({ ...where, role }, 'redis connection lost; reconnecting');
  });
  return client;
}

/** Whether `client` answers a PING within PROBE_TIMEOUT_MS. Never throws. */
async function probe(client: RedisClient): Promise<boolean> {
  if (client.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  const ping = client.ping().then(
    (answer) => answer === 'PONG',
    () => false,
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** At most one `redis out of memory` line per this long (every command fails alike meanwhile). */
const OOM_LOG_EVERY_MS = 10_000;

const retryDelay = (times: number): number => Math.min(times * 100, MAX_RECONNECT_DELAY_MS);

const OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: COMMAND_TIMEOUT_MS,
  connectTimeout: CONNECT_TIMEOUT_MS,
  retryStrategy: retryDelay,
  // ioredis would print unhandled 'error' events itself; each client below has a listener.
  showFriendlyErrorStack: false,
};

type ClusterTarget = Extract<RedisTarget, { kind: 'cluster' }>;

/** The password and TLS options of each node of a Cluster. */
const nodeOptions = (target: ClusterTarget): RedisOptions => ({
  ...(target.password === undefined ? {} : { password: target.password }),
  ...(target.tls ? { tls: {} } : {}),
});

/** A new client to a server or to the primary that Sentinels name: the common options plus a role's. */
function serverClient(target: Exclude<RedisTarget, ClusterTarget>, role: RoleOptions): Redis {
  if (target.kind === 'server') return new Redis(target.url, { ...OPTIONS, ...role });
  return new Redis({
    ...OPTIONS,
    ...role,
    sentinels: [...target.sentinels],
    name: target.name,
    // The Sentinels ask for the same password as the primary and its replicas.
    ...(target.password === undefined
      ? {}
      : { password: target.password, sentinelPassword: target.password }),
    ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    sentinelRetryStrategy: retryDelay,
  });
}

/** A new client to `target` with the common options plus a role's. */
function clientOf(target: RedisTarget, role: RoleOptions): RedisClient {
  if (target.kind !== 'cluster') return serverClient(target, role);
  const { enableOfflineQueue = false, ...perNode } = role;
  return new Cluster([...target.nodes], {
    enableOfflineQueue,
    clusterRetryStrategy: retryDelay,
    // A node that answers MOVED/ASK or fails over: the command follows it, a few times.
    maxRedirections: 16,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    showFriendlyErrorStack: false,
    redisOptions: { ...OPTIONS, ...perNode, ...nodeOptions(target) },
  });
}

/** A new subscriber to `target` (see RedisConnection.subscriber). */
function subscriberOf(target: RedisTarget): Redis {
  if (target.kind !== 'cluster') return serverClient(target, SUBSCRIBER);
  return clusterSubscriber(target.nodes, { ...OPTIONS, ...SUBSCRIBER, ...nodeOptions(target) });
}

/** The secrets of a target, for masking its clients' errors. */
function targetSecrets(target: RedisTarget): string[] {
  if (target.kind === 'server') return redisSecrets(target.url);
  return target.password === undefined ? [] : [target.password];
}

export function createRedisConnection(
  target: RedisTarget,
  logger: Pick<Logger, 'info' | 'warn'>,
): RedisConnection {
  let closing = false;
  const watcher: Watcher = {
    logger,
    where: { redis: redisView(target) },
    variants: secretVariants(targetSecrets(target)),
    closing: () => closing,
  };
  const client = watch(clientOf(target, {}), 'commands', watcher);
  const extra = new Set<RedisClient>();
  /** `other`, watched under `role` and closed with this connection. */
  const owned = <C extends RedisClient>(other: C, role: string): C => {
    watch(other, role, watcher);
    extra.add(other);
    other.once('end', () => extra.delete(other));
    return other;
  };
  let oomLoggedAt = -Infinity;
  /** Redis at `maxmemory` (noeviction) refuses writes with OOM: answered 503 as unavailable, logged. */
  const outOfMemory = (err: unknown): void => {
    if (replyCode(err) !== 'OOM' || Date.now() - oomLoggedAt < OOM_LOG_EVERY_MS) return;
    oomLoggedAt = Date.now();
    logger.warn(
      { ...watcher.where, problem: 'OOM' },
      'redis out of memory: writes refused until memory frees',
    );
  };

  return {
    client,
    duplicate: (role) => owned(clientOf(target, {}), role),
    subscriber: (role) => owned(subscriberOf(target), role),
    probe: () => probe(client),
    async call(fn) {
      try {
        return await fn(client);
      } catch (err) {
        if (isServiceError(err)) throw err;
        outOfMemory(err);
        throw serviceError('STORE_UNAVAILABLE');
      }
    },
    async close() {
      closing = true;
      for (const other of extra) other.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
