/**
 * The stores of the chosen mode, made once at start-up (src/service.ts, or a test): embedded (this
 * instance's scratch space, no Redis) when neither `redis.url` nor `redis.clusterNodes` is set, else
 * Redis (one server or a cluster, shared by every replica, one connection). Modules receive only the store they use.
 */
import { alwaysHeld, type ScheduleLock } from './prebuilds/schedule-lock.js';
import { hostname } from 'node:os';
import { createEmbeddedLeases, type BuildLeases } from '../workers/leases/leases.js';
import { createMemoryBuildRegistry } from './builds/memory-registry.js';
import type { BuildRegistry } from './builds/types.js';
import type { QueueStore } from './queue/types.js';
import type { Config } from './config/types.js';
import { redisTargetOf, type RedisTarget } from './config/redis-target.js';
import { createLogStore } from './logs/store.js';
import type { LogStore } from './logs/types.js';
import type { Logger } from './observability/logger.js';
import { MemoryServedStore, type ServedStore } from './retention/served.js';
import { SCHEDULE_LOCK } from './redis/keys.js';
import { createMemorySessions, type SessionStore } from './auth/sessions.js';
import { retentionMs } from './usage/buckets.js';
import { FileUsageStore } from './usage/file-store.js';
import type { UsageStore } from './usage/store.js';

import { openFileJournal, openRedisJournal, type OpenedJournal } from './events/journal.js';
import {
  redisIdentityKey,
  scratchIdentityKey,
  type SecretIdentityKey,
} from '../workers/builder/secret-identity-key.js';

export interface Stores {
  readonly logStore: LogStore;
  /** Running and recent builds (GET /builds): this instance's, or every replica's in Redis mode. */
  readonly builds: BuildRegistry;
  /** Following across replicas (Redis mode); embedded: every build runs unshared. */
  readonly leases: BuildLeases;
  /** The build secrets identity key: in Redis (every replica's), or in the scratch space. */
  readonly secretIdentityKey: SecretIdentityKey;
  /** What retention counts as served, and its run lock: this instance's, or shared in Redis mode. */
  readonly served: ServedStore;
  /** Events until delivered: a file in the scratch space, or Redis streams (docs/events.md). */
  readonly events: OpenedJournal;
  /** The usage per tenant (docs/usage.md): a journal in the scratch space, or Redis (every replica's). */
  readonly usage: UsageStore;
  /** Redis mode only: whether Redis answers now (readiness fails when it does not). */
  readonly sharedStoreProbe?: () => Promise<boolean>;
  /** Who runs the prebuild schedules: this instance (embedded), or one replica at a time (Redis). */
  readonly scheduleLock: ScheduleLock;
  /** Redis mode: the build queue every replica shares (embedded: the worker's own, in memory). */
  readonly queue?: { readonly store: QueueStore; readonly replica: string };
  /** People's sessions (docs/auth.md): this instance's memory, or shared in Redis mode. */
  readonly sessions: SessionStore;
  /** Closes the Redis connections (nothing in embedded mode). */
  close(): Promise<void>;
}

/** Embedded mode: every store is this instance's own, its files in the scratch space. */
async function embeddedStores(
  config: Pick<
    Config,
    'scratchDir' | 'logs' | 'gitCredentials' | 'registryAuth' | 'build' | 'redis' | 'usage'
  >,
  subscriptions: string[],
): Promise<Stores> {
  return {
    logStore: await createLogStore(config),
    builds: createMemoryBuildRegistry({
      history: config.build.history,
      historyDays: config.build.historyDays,
    }),
    leases: createEmbeddedLeases(),
    secretIdentityKey: scratchIdentityKey(config.scratchDir),
    served: new MemoryServedStore({ scratchDir: config.scratchDir }),
    scheduleLock: alwaysHeld,
    events: await openFileJournal(config.scratchDir, subscriptions),
    sessions: createMemorySessions(),
    usage: new FileUsageStore(config.scratchDir, retentionMs(config.usage.retentionDays)),
    close: async () => undefined,
  };
}

export async function createStores(
  config: Pick<
    Config,
    'redis' | 'scratchDir' | 'logs' | 'gitCredentials' | 'registryAuth' | 'build' | 'events' | 'usage'
  >,
  logger: Logger,
): Promise<Stores> {
  const subscriptions = config.events.subscriptions.map((s) => s.name);
  const target = redisTargetOf(config.redis);
  if (target === undefined) return embeddedStores(config, subscriptions);
  return redisStores(config, target, logger, subscriptions);
}

/** Redis mode: every store shared by the replicas through one Redis. */
async function redisStores(
  config: Parameters<typeof createStores>[0],
  target: RedisTarget,
  logger: Logger,
  subscriptions: string[],
): Promise<Stores> {
  // Loaded only in Redis mode: an embedded instance never loads the Redis client (memory at rest).
  const [
    { createRedisConnection },
    { createRedisLogStore },
    { createRedisBuildRegistry },
    { createRedisBuildLeases },
    { RedisServedStore },
    { RedisLock },
    { createRedisQueue },
    { createRedisSessions },
    { RedisUsageStore },
  ] = await Promise.all([
    import('./redis/connection.js'),
    import('./logs/redis-store.js'),
    import('./builds/redis-registry.js'),
    import('../workers/leases/redis-leases.js'),
    import('./retention/redis-served.js'),
    import('./redis/lock.js'),
    import('./queue/redis-queue.js'),
    import('./auth/redis-sessions.js'),
    import('./usage/redis-store.js'),
  ]);
  const redis = createRedisConnection(target, logger);
  const logStore = createRedisLogStore({ config, connection: redis, logger });
  const replica = `${hostname()}:${process.pid}`;
  const { history, historyDays } = config.build;
  const builds = createRedisBuildRegistry({ connection: redis, history, historyDays, logger, replica });
  const leases = createRedisBuildLeases({ connection: redis, logger });
  const queue = createRedisQueue(redis, replica, logger);
  return {
    logStore,
    builds,
    leases,
    queue: { store: queue, replica },
    secretIdentityKey: redisIdentityKey(redis),
    served: new RedisServedStore(redis),
    scheduleLock: new RedisLock(redis, SCHEDULE_LOCK),
    events: await openRedisJournal(redis, subscriptions),
    sessions: createRedisSessions(redis),
    usage: new RedisUsageStore(redis, config.usage.retentionDays),
    sharedStoreProbe: () => redis.probe(),
    close: async () => {
      queue.close();
      builds.close();
      await leases.close();
      await logStore.close();
      await redis.close();
    },
  };
}
