/**
 * For test files that talk to Redis directly (no service process): one redis-server of the file's
 * own (started before its tests, disposed after), and connections to it that are ready to use.
 */
import test from 'ava';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { startRedis, type RedisProcess } from './redis-process.js';
import { silentLogger } from './silent-logger.js';

/** A connection to `server` once it is ready (the client connects on its own). */
export async function readyConnection(
  server: RedisProcess,
  logger = silentLogger(),
): Promise<RedisConnection> {
  const connection = createRedisConnection(server.url, logger);
  if (connection.client.status !== 'ready') {
    await new Promise((resolve) => connection.client.once('ready', resolve));
  }
  return connection;
}

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
