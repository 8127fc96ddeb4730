/**
 * The two kinds of Redis the Redis tests run against (one server, a three-master cluster), and a
 * connection of a test's own to either once it is ready. No test runner here: benchmarks use it too.
 */
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import type { RedisTarget } from '../../src/config/redis-target.js';
import type { RedisProcess } from './redis-process.js';
import type { RedisClusterProcess } from './redis-cluster-process.js';
import { silentLogger } from './silent-logger.js';

/** A store the Redis-level tests run against: one server or a three-master cluster. */
export type RedisKind = 'server' | 'cluster';
export const REDIS_KINDS: readonly RedisKind[] = ['server', 'cluster'];

/** A connection to `server` once it is ready (the client connects on its own). */
export async function readyConnection(
  server: RedisProcess | RedisClusterProcess,
  logger = silentLogger(),
): Promise<RedisConnection> {
  const target: RedisTarget = 'target' in server ? server.target : { kind: 'server', url: server.url };
  const connection = createRedisConnection(target, logger);
  if (connection.client.status !== 'ready') {
    await new Promise((resolve) => connection.client.once('ready', resolve));
  }
  return connection;
}
