/**
 * Whether the shared queue still holds a build, waiting or running: a queued record the queue no
 * longer holds was lost before it started (docs/queue.md). The one place the build records read
 * the queue's own keys, apart from their scripts (another hash slot in a Redis Cluster).
 */
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_QUEUE } from '../redis/keys.js';

interface QueueIds {
  readonly waiting?: readonly { readonly id: string }[];
  readonly running?: readonly { readonly id: string }[];
}

/** True when the queue holds `id` (one read of the queue). */
export async function queueHolds(connection: Pick<RedisConnection, 'call'>, id: string): Promise<boolean> {
  const text = (await connection.call((client) => client.get(BUILD_QUEUE))) as string | null;
  if (text === null) return false;
  const queue = JSON.parse(text) as QueueIds;
  return [...(queue.waiting ?? []), ...(queue.running ?? [])].some((item) => item.id === id);
}
