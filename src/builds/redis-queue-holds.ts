/**
 * Whether the shared queue still holds builds, waiting or running: a queued record the queue no
 * longer holds was lost before it started, a running record whose replica died is run again when
 * the queue keeps its entry (docs/queue.md). The one place the build records read the queue's own
 * keys, apart from their scripts (another hash slot in a Redis Cluster).
 */
import type { RedisConnection } from '../redis/connection.js';
import { QUEUE_KEYS } from '../redis/keys.js';

/** The queue's hashes of waiting and of running builds, by id (src/redis/keys.ts). */
const [WAITING, RUNNING] = QUEUE_KEYS;

/** What the queue holds of a build: whether it waits, and its running value (undefined: none). */
interface Held {
  readonly waiting: boolean;
  readonly running: unknown;
}

/**
 * What the queue holds of each of `ids`: a field lookup and a field read per id in one transaction
 * (one round trip, one slot), O(ids); a page's records are asked about together.
 */
async function heldOf(connection: Pick<RedisConnection, 'call'>, ids: readonly string[]): Promise<Held[]> {
  if (ids.length === 0 || WAITING === undefined || RUNNING === undefined) return [];
  const replies = await connection.call((client) => {
    const multi = client.multi();
    for (const id of ids) multi.hexists(WAITING, id).hget(RUNNING, id);
    return multi.exec();
  });
  const answer = (at: number): unknown => {
    const [err, value] = replies?.[at] ?? [];
    return err === null ? value : undefined;
  };
  return ids.map((_, i) => ({ waiting: answer(2 * i) === 1, running: answer(2 * i + 1) ?? undefined }));
}

/** The ids of `ids` the queue holds, waiting or running. O(ids), one round trip. */
export async function queueHolding(
  connection: Pick<RedisConnection, 'call'>,
  ids: readonly string[],
): Promise<Set<string>> {
  const held = await heldOf(connection, ids);
  return new Set(ids.filter((_, i) => held[i]?.waiting === true || typeof held[i]?.running === 'string'));
}

/** A running value keeps its entry (any replica may run it again): its fifth field (keys.ts). */
const keepsEntry = (value: unknown): boolean =>
  typeof value === 'string' && (value.split('\0')[4] ?? '') !== '';

/** The ids of `ids` any replica may run again: waiting, or running with their entry kept. O(ids), one round trip. */
export async function queueRerunnable(
  connection: Pick<RedisConnection, 'call'>,
  ids: readonly string[],
): Promise<Set<string>> {
  const held = await heldOf(connection, ids);
  return new Set(ids.filter((_, i) => held[i]?.waiting === true || keepsEntry(held[i]?.running)));
}
