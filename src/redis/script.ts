/**
 * A Lua script run atomically by Redis: sent once, then called by its SHA1 (EVALSHA), sent again
 * when Redis answers NOSCRIPT (a restarted or flushed server). Atomic steps of Redis mode live in
 * such scripts, never in read-modify-write from the service.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface RedisScript {
  run(client: Redis, keys: readonly string[], args: readonly (string | number | Buffer)[]): Promise<unknown>;
}

export function redisScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(client, keys, args) {
      try {
        return await client.evalsha(sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return client.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}
