/**
 * Where the key inputs of each repository's last build are kept (reuse/recent-inputs.ts reads and
 * writes them as JSON text): this instance's memory, bounded, or Redis, shared by every replica.
 */
import { createHash } from 'node:crypto';
import type { RedisConnection } from '../../src/redis/connection.js';
import { recentInputsKey } from '../../src/redis/keys.js';

const MAX_ENTRIES = 1000;
/** A repository and branch not built for this long is forgotten (Redis mode). */
const TTL_SECONDS = 30 * 24 * 3600;

/** JSON text by id. */
export interface RecentStore {
  get(id: string): Promise<string | undefined>;
  set(id: string, text: string): Promise<void>;
}

/** This instance's, bounded: the oldest entries go first. */
export function memoryRecentStore(max = MAX_ENTRIES): RecentStore {
  const entries = new Map<string, string>();
  return {
    get: async (id) => entries.get(id),
    set: async (id, text) => {
      entries.delete(id);
      entries.set(id, text);
      while (entries.size > max) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
    },
  };
}

/** Every replica's (Redis mode): one key per repository, branch and target. */
export function redisRecentStore(connection: Pick<RedisConnection, 'call'>): RecentStore {
  const key = (id: string): string => recentInputsKey(createHash('sha256').update(id).digest('hex'));
  return {
    get: async (id) => (await connection.call((client) => client.get(key(id)))) ?? undefined,
    set: async (id, text) => {
      await connection.call((client) => client.set(key(id), text, 'EX', TTL_SECONDS));
    },
  };
}
