/**
 * The stores of the chosen mode, made once at start-up (main.ts, or a test): embedded (this
 * instance's scratch space, no Redis) when `redisUrl` is unset, else Redis (shared by every
 * replica, one connection). Modules receive only the store they use.
 */
import type { Config } from './config/types.js';
import { createRedisLogStore } from './logs/redis-store.js';
import { createLogStore } from './logs/store.js';
import type { LogStore } from './logs/types.js';
import type { Logger } from './observability/logger.js';
import { createRedisConnection } from './redis/connection.js';

export interface Stores {
  readonly logStore: LogStore;
  /** Redis mode only: whether Redis answers now (readiness fails when it does not). */
  readonly sharedStoreProbe?: () => Promise<boolean>;
  /** Closes the Redis connections (nothing in embedded mode). */
  close(): Promise<void>;
}

export async function createStores(
  config: Pick<Config, 'redisUrl' | 'scratchDir' | 'commandLogRetention' | 'gitCredentials' | 'registryAuth'>,
  logger: Logger,
): Promise<Stores> {
  if (config.redisUrl === undefined) {
    return { logStore: await createLogStore(config), close: async () => undefined };
  }
  const redis = createRedisConnection(config.redisUrl, logger);
  const logStore = createRedisLogStore({ config, connection: redis, logger });
  return {
    logStore,
    sharedStoreProbe: () => redis.probe(),
    close: async () => {
      await logStore.close();
      await redis.close();
    },
  };
}
