/**
 * A Lua script run atomically by Redis: sent once, then called by its SHA1 (EVALSHA), sent again
 * when Redis answers NOSCRIPT (a restarted or flushed server, or a cluster node that never saw it).
 * Atomic steps of Redis mode live in such scripts, never in read-modify-write from the service.
 * Every key a script touches is in its KEYS, and they share a hash tag (one slot: docs/redis.md).
 */
import { createHash } from 'node:crypto';
import type { RedisCommander } from 'ioredis';
import { replyCode } from './reply-code.js';

export interface RedisScript {
  /** `client`: a server's or a cluster's (each only sends commands): all `keys` must share a slot. */
  run(
    client: RedisCommander,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown>;
}

export function redisScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(client, keys, args) {
      try {
        return await client.evalsha(sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (replyCode(err) !== 'NOSCRIPT') throw err;
        return client.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}
