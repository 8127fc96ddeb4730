/**
 * A running build handed back to the shared queue by a replica that stops before it could finish
 * it: the record marked (still leased: no read finds it lost), the queue's own enqueue (its keys
 * lie in another Cluster slot), then the record queued again, its lease held a while by the queue's
 * mark so that a read between another replica's take and adopt never ends it. A replica may adopt
 * it at any step. Each script O(log n) (one index move).
 */
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_CHANGES_CHANNEL, buildAliveKey, buildIndexKey, buildKey } from '../redis/keys.js';
import { LEASE_LUA, LEASE_MS } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';

/** The holder of a handed-back build's lease until a replica adopts it (never a replica's name). */
export const HANDED_BACK_HOLDER = '@queued-again';

/** KEYS: build, alive. ARGV: replica. Marks a running record this replica leases; 1, else 0. */
const MARK = redisScript(`${LEASE_LUA}
local text = redis.call('GET', KEYS[1])
if not text or not lease_held(KEYS[2], ARGV[1]) then return 0 end
local entry = cjson.decode(text)
if entry.phase == 'finished' or entry.phase == 'queued' then return 0 end
entry.handedBack = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(entry))
return 1
`);

/**
 * KEYS: build, alive, queued index, running index. ARGV: replica, holder, lease ms, changes
 * channel. The marked record waits again; 0 when another replica adopted it meanwhile.
 */
const QUEUED = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
if entry.handedBack ~= ARGV[1] or entry.phase == 'finished' then return 0 end
entry.handedBack = nil
entry.phase = 'queued'
redis.call('SET', KEYS[1], cjson.encode(entry))
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZREM', KEYS[4], entry.id)
redis.call('ZADD', KEYS[3], entry.startedAtMs, entry.id)
redis.call('PUBLISH', ARGV[4], cjson.encode({id = entry.id, repository = entry.repository}))
return 1
`);

type Calls = Pick<RedisConnection, 'call'>;

/**
 * Hands the running build `id` back: marked, `enqueue` (the queue holds it again), then queued.
 * False when this replica no longer leases it (it ended, or its lease ran out): nothing changed.
 */
export async function handBackEntry(
  connection: Calls,
  id: string,
  replica: string,
  enqueue: () => Promise<void>,
): Promise<boolean> {
  const marked = (await connection.call((client) =>
    MARK.run(client, [buildKey(id), buildAliveKey(id)], [replica]),
  )) as number;
  if (marked !== 1) return false;
  await enqueue();
  const keys = [
    buildKey(id),
    buildAliveKey(id),
    buildIndexKey('status', 'queued'),
    buildIndexKey('status', 'running'),
  ];
  await connection.call((client) =>
    QUEUED.run(client, keys, [replica, HANDED_BACK_HOLDER, LEASE_MS, BUILD_CHANGES_CHANNEL]),
  );
  return true;
}
