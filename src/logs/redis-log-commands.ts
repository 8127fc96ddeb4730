/**
 * The Redis commands of a log writer: one append per element (RPUSHX: only to a log that still
 * exists), and the close (its last element + closed; recorded; the oldest beyond retention
 * deleted) as three Lua scripts, one per slot.
 */
import type { RedisClient } from '../redis/connection.js';
import { framedCommand } from '../redis/framed-command.js';
import { redisScript } from '../redis/script.js';
import type { Element } from './redis-log-elements.js';
import { channelOf, closedKey, metaKey, OPEN_LOG_IDLE_TTL_MS, textKey } from '../redis/keys.js';
import type { LogKind } from './types.js';

/**
 * Appends one element (RPUSHX: only to a list that exists; the list is created with an empty first
 * element when the log is opened, and a deleted or pruned log has none), framed in its space. The
 * TTL refresh and the followers' wake-up follow on the same connection, so Redis runs them right
 * after the append; they are best effort (the next append or the close repeats both). Resolves
 * false when the log no longer exists.
 */
export async function appendElement(
  client: RedisClient,
  id: string,
  element: Element,
  refreshTtl: boolean,
): Promise<boolean> {
  const command = framedCommand('rpushx', [textKey(id)], element.space, element.length);
  void client.sendCommand(command);
  // Best effort: a failure here is repeated by the next append or the close.
  const after = (
    refreshTtl
      ? client
          .multi()
          .pexpire(textKey(id), OPEN_LOG_IDLE_TTL_MS)
          .pexpire(metaKey(id), OPEN_LOG_IDLE_TTL_MS)
          .publish(channelOf(id), 'a')
          .exec()
      : client.publish(channelOf(id), 'a')
  ).catch(() => undefined);
  const length = (await command.promise) as number;
  await after;
  return length !== 0;
}

/**
 * KEYS: text, meta (one log's slot). ARGV: the last pieces of output (often none). Appends them,
 * marks the log closed (kept without expiry) and announces it. Returns 1 when the log is closed
 * now or was already (a retry after a lost answer goes on to record it), 0 when it was deleted.
 */
const CLOSE = redisScript(`
local state = redis.call('HGET', KEYS[2], 'state')
if not state then return 0 end
if state ~= 'open' then return 1 end
for i = 1, #ARGV do redis.call('RPUSHX', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[2], 'state', 'closed')
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('PUBLISH', KEYS[1], 'c')
return 1
`);

/**
 * KEYS: closed set of a kind. ARGV: id, now ms, retention. Records the closed log and answers the
 * oldest beyond retention (left in the set until they are deleted: a close that stops between
 * deletes nothing twice and leaves nothing behind, the next close deletes them).
 */
const RECORD = redisScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if excess <= 0 then return {} end
return redis.call('ZRANGE', KEYS[1], 0, excess - 1)
`);

/** KEYS: text, meta (one log's slot). Deletes a log and announces it; 0 when there was none. */
export const DROP = redisScript(`
local kind = redis.call('HGET', KEYS[2], 'kind')
if redis.call('DEL', KEYS[1], KEYS[2]) > 0 then redis.call('PUBLISH', KEYS[1], 'd') end
return kind or false
`);

/**
 * Closes log `id` of `kind` with `tail` as its last output, records it among the closed logs of its
 * kind and deletes the oldest beyond retention: three steps, each in its own slot (a log's keys,
 * the kind's set, each pruned log's keys), each safe to repeat, so a retry after a failure
 * completes what the first try began. Cost: O(tail + pruned logs).
 */
export async function closeLog(
  client: RedisClient,
  log: { readonly id: string; readonly kind: LogKind; readonly now: number; readonly retention: number },
  tail: readonly Buffer[],
): Promise<void> {
  const closed = await CLOSE.run(client, [textKey(log.id), metaKey(log.id)], [...tail]);
  if (closed === 0) return;
  const set = closedKey(log.kind);
  const oldest = (await RECORD.run(client, [set], [log.id, log.now, log.retention])) as string[];
  if (oldest.length === 0) return;
  await Promise.all(oldest.map((old) => DROP.run(client, [textKey(old), metaKey(old)], [])));
  await client.zrem(set, ...oldest);
}
