/**
 * The Redis commands of a log writer: one append per element (RPUSHX: only to a log that still
 * exists), and the close (its last element + closed + record + prune beyond retention) as one
 * Lua script.
 */
import type { Redis } from 'ioredis';
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
  client: Redis,
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
 * KEYS: text, meta, closed set of its kind. ARGV: id, now ms, retention, a text key without its id,
 * then the last pieces of output (often none). A meta key is its text key and the same suffix. Appends them, marks the log closed (kept without expiry), records
 * it, and deletes the oldest closed logs of its kind beyond retention, announcing each deletion.
 * Returns 0 when the log was deleted (or closed) meanwhile.
 */
const CLOSE = redisScript(`
if redis.call('HGET', KEYS[2], 'state') ~= 'open' then return 0 end
for i = 5, #ARGV do redis.call('RPUSHX', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[2], 'state', 'closed')
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('PUBLISH', KEYS[1], 'c')
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[3])
if excess > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[3], excess)
  for i = 1, #oldest, 2 do
    local key = ARGV[4] .. oldest[i]
    redis.call('DEL', key, key .. string.sub(KEYS[2], #KEYS[1] + 1))
    redis.call('PUBLISH', key, 'd')
  end
end
return 1
`);

/** Closes log `id` of `kind` with `tail` as its last output (idempotent: a retry changes nothing). */
export async function closeLog(
  client: Redis,
  log: { readonly id: string; readonly kind: LogKind; readonly now: number; readonly retention: number },
  tail: readonly Buffer[],
): Promise<void> {
  await CLOSE.run(
    client,
    [textKey(log.id), metaKey(log.id), closedKey(log.kind)],
    [log.id, log.now, log.retention, textKey(''), ...tail],
  );
}
