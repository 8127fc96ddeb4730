/**
 * Everything a Redis holds, as text (keys and values of every type, streams too): for canary checks.
 * Several URLs: each master of a Redis Cluster (a node's KEYS sees only its own slots).
 */
import { Redis } from 'ioredis';

async function valueOf(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'string') return (await redis.getBuffer(key))?.toString('latin1') ?? '';
  if (type === 'list')
    return (await redis.lrangeBuffer(key, '0', '-1')).map((b) => b.toString('latin1')).join('\n');
  if (type === 'hash') return JSON.stringify(await redis.hgetall(key));
  if (type === 'set') return (await redis.smembers(key)).join('\n');
  if (type === 'zset') return (await redis.zrange(key, '0', '-1')).join('\n');
  if (type === 'stream') return JSON.stringify(await redis.xrange(key, '-', '+'));
  return '';
}

export async function dumpRedis(url: string | readonly string[]): Promise<string> {
  if (typeof url !== 'string') return (await Promise.all(url.map(dumpRedis))).join('\n');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = await redis.keys('*');
    const values = await Promise.all(keys.map((key) => valueOf(redis, key)));
    return keys.map((key, i) => `${key}\n${values[i]}`).join('\n');
  } finally {
    redis.disconnect();
  }
}
