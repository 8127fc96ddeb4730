/**
 * The stores of the chosen mode, made once at start-up (src/service.ts, or a test): embedded (this
 * instance's scratch space, no Redis) when `redisUrl` is unset, else Redis (shared by every
 * replica, one connection). Modules receive only the store they use.
 */
import { hostname } from 'node:os';
import { createEmbeddedLeases, type BuildLeases } from '../workers/leases/leases.js';
import { createMemoryBuildRegistry } from './builds/memory-registry.js';
import type { BuildRegistry } from './builds/types.js';
import type { Config } from './config/types.js';
import { createLogStore } from './logs/store.js';
import type { LogStore } from './logs/types.js';
import type { Logger } from './observability/logger.js';

export interface Stores {
  readonly logStore: LogStore;
  /** Running and recent builds (GET /builds): this instance's, or every replica's in Redis mode. */
  readonly builds: BuildRegistry;
  /** Coalescing across replicas (Redis mode); embedded: every build runs unshared. */
  readonly leases: BuildLeases;
  /** Redis mode only: whether Redis answers now (readiness fails when it does not). */
  readonly sharedStoreProbe?: () => Promise<boolean>;
  /** Closes the Redis connections (nothing in embedded mode). */
  close(): Promise<void>;
}

export async function createStores(
  config: Pick<
    Config,
    'redisUrl' | 'scratchDir' | 'commandLogRetention' | 'gitCredentials' | 'registryAuth' | 'buildHistory'
  >,
  logger: Logger,
): Promise<Stores> {
  if (config.redisUrl === undefined) {
    return {
      logStore: await createLogStore(config),
      builds: createMemoryBuildRegistry({ history: config.buildHistory }),
      leases: createEmbeddedLeases(),
      close: async () => undefined,
    };
  }
  // Loaded only in Redis mode: an embedded instance never loads the Redis client (memory at rest).
  const [
    { createRedisConnection },
    { createRedisLogStore },
    { createRedisBuildRegistry },
    { createRedisBuildLeases },
  ] = await Promise.all([
    import('./redis/connection.js'),
    import('./logs/redis-store.js'),
    import('./builds/redis-registry.js'),
    import('../workers/leases/redis-leases.js'),
  ]);
  const redis = createRedisConnection(config.redisUrl, logger);
  const logStore = createRedisLogStore({ config, connection: redis, logger });
  const replica = `${hostname()}:${process.pid}`;
  const builds = createRedisBuildRegistry({
    connection: redis,
    history: config.buildHistory,
    logger,
    replica,
  });
  const leases = createRedisBuildLeases({ connection: redis, logger });
  return {
    logStore,
    builds,
    leases,
    sharedStoreProbe: () => redis.probe(),
    close: async () => {
      builds.close();
      await leases.close();
      await logStore.close();
      await redis.close();
    },
  };
}
