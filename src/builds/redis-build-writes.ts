/**
 * The writes of the Redis build registry, each one Lua script (atomic, no read-modify-write from
 * the service): a build started (with its lease, unless queued), a queued one adopted by the
 * replica that runs it, a running record patched, and its finish.
 */
import type { RedisConnection } from '../redis/connection.js';
import { buildAliveKey, buildKey, RUNNING_BUILDS } from '../redis/keys.js';
import { LEASE_LUA } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';
import { BUILD_PREFIX, ENDINGS_LUA, entryKeys, type EndingContext } from './redis-build-endings.js';
import type { BuildEntry } from './records.js';
import type { BuildOutcome } from './types.js';

/**
 * KEYS: build, running, alive. ARGV: id, record json, started ms, lease ms, replica. A queued
 * build has no lease (0): the queue keeps it until a replica adopts it.
 */
const START = redisScript(`${LEASE_LUA}
redis.call('SET', KEYS[1], ARGV[2])
if tonumber(ARGV[4]) > 0 then lease_take(KEYS[3], ARGV[5], ARGV[4]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`);

/** KEYS: build, alive. ARGV: replica, lease ms. A queued record taken to run here, leased. */
const ADOPT = redisScript(`${LEASE_LUA}
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
if entry.phase ~= 'queued' then return 0 end
entry.phase = 'cloning'
entry.replica = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(entry))
lease_take(KEYS[2], ARGV[1], ARGV[2])
return 1
`);

/** KEYS: build. ARGV: patch json, waiters delta. Merges into a running record. */
const UPDATE = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
for k, v in pairs(cjson.decode(ARGV[1])) do entry[k] = v end
entry.waiters = math.max(0, (entry.waiters or 0) + tonumber(ARGV[2]))
redis.call('SET', KEYS[1], cjson.encode(entry))
return 1
`);

/** KEYS: build, running, finished. ARGV: build key prefix, id, outcome json, now ms, history. */
const FINISH = redisScript(`${ENDINGS_LUA}
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
finish(KEYS[2], KEYS[3], ARGV[2], cjson.decode(text), cjson.decode(ARGV[3]), ARGV[4], tonumber(ARGV[5]))
return 1
`);

type Calls = Pick<RedisConnection, 'call'>;

/** Writes a new record; `leaseMs` 0 (a queued build): no lease until a replica adopts it. */
export async function startEntry(
  connection: Calls,
  entry: BuildEntry & { replica: string },
  leaseMs: number,
): Promise<void> {
  const { id, replica } = entry;
  await connection.call((client) =>
    START.run(
      client,
      [buildKey(id), RUNNING_BUILDS, buildAliveKey(id)],
      [id, JSON.stringify(entry), entry.startedAtMs, leaseMs, replica],
    ),
  );
}

/** Takes the queued record `id` to run on `replica`, leased; false: it is no longer queued. */
export async function adoptEntry(
  connection: Calls,
  id: string,
  replica: string,
  leaseMs: number,
): Promise<boolean> {
  const adopted = (await connection.call((client) =>
    ADOPT.run(client, [buildKey(id), buildAliveKey(id)], [replica, leaseMs]),
  )) as number;
  return adopted === 1;
}

/** Merges `patch` into the running record `id` and adds `delta` to its waiters. */
export async function updateEntry(
  connection: Calls,
  id: string,
  patch: Record<string, unknown>,
  delta: number,
): Promise<void> {
  await connection.call(async (client) => {
    await UPDATE.run(client, [buildKey(id)], [JSON.stringify(patch), delta]);
  });
}

/** Finishes the running record `id`: kept among the newest `history`, its end published. */
export async function finishEntry(
  connection: Calls,
  id: string,
  outcome: BuildOutcome,
  { nowMs, history }: EndingContext,
): Promise<void> {
  await connection.call((client) =>
    FINISH.run(client, entryKeys(id), [BUILD_PREFIX, id, JSON.stringify(outcome), nowMs, history]),
  );
}
