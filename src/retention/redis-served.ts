/**
 * The served store of Redis mode (served.ts), shared by every replica: a hash per repository
 * (ref -> ms, kept a year after its last mark), the set of repositories, and the run lock (a
 * src/redis/lock.ts lock of its own for each run, held while the run lasts).
 */
import type { RedisConnection } from '../redis/connection.js';
import { RETENTION_LOCK, RETENTION_REPOSITORIES, servedKey } from '../redis/keys.js';
import { RedisLock } from '../redis/lock.js';
import { type Repository, repositoryEntry, repositoryOfEntry, type ServedStore } from './served.js';

const SERVED_TTL_MS = 366 * 24 * 3600 * 1000;

export class RedisServedStore implements ServedStore {
  constructor(private readonly redis: RedisConnection) {}

  async mark(repository: Repository, refs: readonly string[]): Promise<void> {
    if (refs.length === 0) return;
    const now = String(Date.now());
    const key = servedKey(repository.repository);
    await this.redis.call((client) =>
      client
        .multi()
        .hset(key, ...refs.flatMap((ref) => [ref, now]))
        .pexpire(key, SERVED_TTL_MS)
        .sadd(RETENTION_REPOSITORIES, repositoryEntry(repository))
        .exec(),
    );
  }

  async servedTimes(repository: string): Promise<Map<string, number>> {
    const all = await this.redis.call((c) => c.hgetall(servedKey(repository)));
    return new Map(Object.entries(all).map(([ref, ms]) => [ref, Number(ms)]));
  }

  async repositories(): Promise<Repository[]> {
    const entries = await this.redis.call((c) => c.smembers(RETENTION_REPOSITORIES));
    return entries.map(repositoryOfEntry);
  }

  exclusive(work: () => Promise<void>): Promise<boolean> {
    return new RedisLock(this.redis, RETENTION_LOCK).holdWhile(work);
  }
}
