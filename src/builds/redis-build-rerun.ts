/**
 * A running build whose replica died without grace, queued again: its record waits (phase
 * `queued`, leased by the queue's mark as a handed-back one is) before the queue's AGAIN puts its
 * entry back (the queue's keys lie in another Cluster slot). Record first: a reap that stops
 * between the two finds the queue's copy still running there and does both again.
 */
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_CHANGES_CHANNEL, buildAliveKey, buildIndexKey, buildKey } from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';
import { HANDED_BACK_HOLDER } from './redis-build-handback.js';

/**
 * KEYS: build, alive, queued index, running index. ARGV: the replica that died, holder, lease ms,
 * changes channel. Answers `queued` when the record waits (now, or already: a repeat), `other`
 * when the build is no longer that replica's to lose (finished, gone, run by another, leased).
 */
const QUEUE_AGAIN = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 'other' end
local entry = cjson.decode(text)
if entry.phase == 'queued' then return 'queued' end
if entry.phase == 'finished' or (entry.replica ~= ARGV[1] and entry.handedBack ~= ARGV[1]) then return 'other' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'other' end
entry.handedBack = nil
entry.phase = 'queued'
redis.call('SET', KEYS[1], cjson.encode(entry))
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZREM', KEYS[4], entry.id)
redis.call('ZADD', KEYS[3], entry.startedAtMs, entry.id)
redis.call('PUBLISH', ARGV[4], cjson.encode({id = entry.id, repository = entry.repository}))
return 'queued'
`);

/**
 * Makes the record of build `id`, running on the dead `replica` without lease, wait again; whether
 * it waits (then the queue may put its entry back). O(log n): one index move.
 */
export async function queueAgainEntry(
  connection: Pick<RedisConnection, 'call'>,
  id: string,
  replica: string,
): Promise<boolean> {
  const keys = [
    buildKey(id),
    buildAliveKey(id),
    buildIndexKey('status', 'queued'),
    buildIndexKey('status', 'running'),
  ];
  const answer = await connection.call((client) =>
    QUEUE_AGAIN.run(client, keys, [replica, HANDED_BACK_HOLDER, LEASE_MS, BUILD_CHANGES_CHANNEL]),
  );
  return answer === 'queued';
}
