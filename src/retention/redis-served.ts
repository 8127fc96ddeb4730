/**
 * The served store of Redis mode (served.ts), shared by every replica: a hash per repository
 * (ref -> ms, kept a year after its last mark), the set of repositories, and the run lock (SET NX
 * PX with a token, renewed while the run lasts, released only by its holder: one script each).
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../redis/connection.js';
import { RETENTION_LOCK, RETENTION_REPOSITORIES, servedKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { ServedStore } from './served.js';

const SERVED_TTL_MS = 366 * 24 * 3600 * 1000;
const LOCK_MS = 5 * 60 * 1000;
const RENEW_MS = 60 * 1000;

/** KEYS: lock. ARGV: token, ms. Renews while held by the token. */
const RENEW = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);
/** KEYS: lock. ARGV: token. Releases only the holder's lock. */
const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export class RedisServedStore implements ServedStore {
  constructor(private readonly redis: RedisConnection) {}

  async mark(repository: string, refs: readonly string[]): Promise<void> {
    if (refs.length === 0) return;
    const now = String(Date.now());
    const key = servedKey(repository);
    await this.redis.call((client) =>
      client
        .multi()
        .hset(key, ...refs.flatMap((ref) => [ref, now]))
        .pexpire(key, SERVED_TTL_MS)
        .sadd(RETENTION_REPOSITORIES, repository)
        .exec(),
    );
  }

  async servedTimes(repository: string): Promise<Map<string, number>> {
    const all = await this.redis.call((c) => c.hgetall(servedKey(repository)));
    return new Map(Object.entries(all).map(([ref, ms]) => [ref, Number(ms)]));
  }

  async repositories(): Promise<string[]> {
    return this.redis.call((c) => c.smembers(RETENTION_REPOSITORIES));
  }

  async exclusive(work: () => Promise<void>): Promise<boolean> {
    const token = randomUUID();
    const claimed = await this.redis.call((c) => c.set(RETENTION_LOCK, token, 'PX', LOCK_MS, 'NX'));
    if (claimed !== 'OK') return false;
    const renew = setInterval(() => {
      void this.redis.call((c) => RENEW.run(c, [RETENTION_LOCK], [token, LOCK_MS])).catch(() => undefined);
    }, RENEW_MS);
    renew.unref();
    try {
      await work();
      return true;
    } finally {
      clearInterval(renew);
      await this.redis.call((c) => RELEASE.run(c, [RETENTION_LOCK], [token])).catch(() => undefined);
    }
  }
}
