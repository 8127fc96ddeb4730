/**
 * For test files that talk to Redis directly (no service process): one redis-server of the file's
 * own (started before its tests, disposed after), or both a server and a Redis Cluster (the same
 * tests run against each), and connections to them that are ready to use.
 */
import test from 'ava';
import { type RedisKind } from './redis-kind.js';
import { startRedis, type RedisProcess } from './redis-process.js';
import { startRedisCluster, type RedisClusterProcess } from './redis-cluster-process.js';

export { readyConnection, REDIS_KINDS, type RedisKind } from './redis-kind.js';

/** Registers a redis-server for this test file; the getter is valid inside tests. */
export function useRedisServer(): () => RedisProcess {
  let server: RedisProcess | undefined;
  test.before(async () => {
    server = await startRedis();
  });
  test.after.always(async () => {
    await server?.dispose();
  });
  return () => {
    if (server === undefined) throw new Error('the redis-server of this test file has not started');
    return server;
  };
}

/**
 * Registers a redis-server and a Redis Cluster for this test file; the getter (valid inside tests)
 * gives the one of a kind. Tests are written once and registered per kind.
 */
export function useRedisTargets(): (kind: RedisKind) => RedisProcess | RedisClusterProcess {
  const server = useRedisServer();
  let cluster: RedisClusterProcess | undefined;
  test.before(async () => {
    cluster = await startRedisCluster();
  });
  test.after.always(async () => {
    await cluster?.dispose();
  });
  return (kind) => {
    if (kind === 'server') return server();
    if (cluster === undefined) throw new Error('the Redis Cluster of this test file has not started');
    return cluster;
  };
}
