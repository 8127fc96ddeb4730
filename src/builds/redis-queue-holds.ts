/**
 * Whether the shared queue still holds a build, waiting or running: a queued record the queue no
 * longer holds was lost before it started (docs/queue.md). The one place the build records read
 * the queue's own keys, apart from their scripts (another hash slot in a Redis Cluster).
 */
import type { RedisConnection } from '../redis/connection.js';
import { QUEUE_KEYS } from '../redis/keys.js';

/** The queue's hashes of waiting and of running builds, by id (src/redis/keys.ts). */
const [WAITING, RUNNING] = QUEUE_KEYS;

/** True when the queue holds `id`: two field lookups in one round trip, O(1). */
export async function queueHolds(connection: Pick<RedisConnection, 'call'>, id: string): Promise<boolean> {
  if (WAITING === undefined || RUNNING === undefined) return false;
  const replies = await connection.call((client) =>
    client.multi().hexists(WAITING, id).hexists(RUNNING, id).exec(),
  );
  return (replies ?? []).some(([err, value]) => err === null && value === 1);
}
