/**
 * The build secrets identity key in Redis mode (docs/secrets.md, The builder's cache keeps the
 * scope): replicas that ask for it at once, each on its own connection, get the same key, made once;
 * a replica started later reads it; it is 32 bytes, kept under its documented Redis key.
 */
import test from 'ava';
import { Redis } from 'ioredis';
import { createRedisConnection } from '../../src/redis/connection.js';
import { SECRETS_IDENTITY_KEY } from '../../src/redis/keys.js';
import { redisIdentityKey } from '../../workers/builder/secret-identity-key.js';
import { startRedis } from '../helpers/redis-process.js';

const quiet = { info: () => undefined, warn: () => undefined };

test('replicas asking at once share one key, made once; a later replica reads the same', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.dispose());
  const connections = Array.from({ length: 4 }, () =>
    createRedisConnection({ kind: 'server', url: redis.url }, quiet),
  );
  t.teardown(() => Promise.all(connections.map((c) => c.close())));
  // Asked before any connection is ready: the first build of a replica just started.
  const keys = await Promise.all(connections.map((connection) => redisIdentityKey(connection)()));
  t.is(keys[0]?.length, 32);
  for (const key of keys) t.deepEqual(key, keys[0]);
  const later = createRedisConnection({ kind: 'server', url: redis.url }, quiet);
  t.teardown(() => later.close());
  t.deepEqual(await redisIdentityKey(later)(), keys[0]);
  const direct = new Redis(redis.url);
  t.teardown(() => direct.disconnect());
  t.is(await direct.get(SECRETS_IDENTITY_KEY), keys[0]?.toString('hex') ?? null);
});
