/**
 * The writes of the Redis build registry, each one Lua script (atomic; every key in KEYS, under the
 * `{builds}` hash tag): a build started, a queued one adopted, a running record patched, and its
 * finish. Each publishes the change for the pages' feed, and each is safe to repeat with the same
 * arguments (docs/redis.md, A failover: writes safe to repeat).
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_CHANGES_CHANNEL, buildAliveKey, buildIndexKey, buildKey, logOwnerKey } from '../redis/keys.js';
import { LEASE_LUA } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';
import { ENDINGS_LUA, endingArgs, endingKeys, type EndingContext } from './redis-build-endings.js';
import { indexedValues, type BuildEntry } from './records.js';
import type { BuildOutcome } from './types.js';

/**
 * KEYS: build, alive, then the indexes it enters. ARGV: id, record json, started ms, lease ms,
 * replica, changes channel, change json. A queued build has no lease (0): the queue keeps it
 * until a replica adopts it.
 */
const START = redisScript(`${LEASE_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
if tonumber(ARGV[4]) > 0 then lease_take(KEYS[2], ARGV[5], ARGV[4]) end
for i = 3, #KEYS do redis.call('ZADD', KEYS[i], ARGV[3], ARGV[1]) end
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`);

/**
 * KEYS: build, alive, queued index, running index. ARGV: replica, lease ms, changes channel. A
 * queued record, or one a stopping replica is handing back (redis-build-handback.ts): its lease
 * becomes this replica's, whoever held it. Only an adoption moves such a record on, so a record
 * running on `replica` was adopted by it: a repeat answers 1 again with its lease taken, unless
 * another holds the lease.
 */
const ADOPT = redisScript(`${LEASE_LUA}
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
if entry.phase == 'finished' then return 0 end
if entry.phase ~= 'queued' and not entry.handedBack then
  if entry.replica ~= ARGV[1] then return 0 end
  if lease_take(KEYS[2], ARGV[1], ARGV[2]) == 1 or redis.call('GET', KEYS[2]) == ARGV[1] then return 1 end
  return 0
end
entry.handedBack = nil
entry.phase = 'cloning'
entry.replica = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(entry))
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('ZREM', KEYS[3], entry.id)
redis.call('ZADD', KEYS[4], entry.startedAtMs, entry.id)
redis.call('PUBLISH', ARGV[3], cjson.encode({id = entry.id, repository = entry.repository}))
return 1
`);

/**
 * KEYS: build, then ARGV[3] indexes it enters (a branch learned), then the owner keys of its logs.
 * ARGV: patch json, waiters delta, index count, log owner TTL ms, changes channel, the delta's
 * token. Merges into a running record; a delta whose token is the last one applied is not added
 * again (a repeat).
 */
const UPDATE = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
if entry.phase == 'finished' then return 0 end
for k, v in pairs(cjson.decode(ARGV[1])) do entry[k] = v end
if tonumber(ARGV[2]) ~= 0 and entry.waitersToken ~= ARGV[6] then
  entry.waiters = math.max(0, (entry.waiters or 0) + tonumber(ARGV[2]))
  entry.waitersToken = ARGV[6]
end
redis.call('SET', KEYS[1], cjson.encode(entry))
local indexes = tonumber(ARGV[3])
for i = 2, indexes + 1 do redis.call('ZADD', KEYS[i], entry.startedAtMs, entry.id) end
for i = indexes + 2, #KEYS do redis.call('SET', KEYS[i], entry.id, 'PX', ARGV[4]) end
redis.call('PUBLISH', ARGV[5], cjson.encode({id = entry.id, repository = entry.repository}))
return 1
`);

/** KEYS: endingKeys. ARGV: endingArgs, outcome json. Answers the ids leaving the history, or 0. */
const FINISH = redisScript(`${ENDINGS_LUA}
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
if entry.phase == 'finished' then return 0 end
finish(entry, cjson.decode(ARGV[7]))
return leaving()
`);

type Calls = Pick<RedisConnection, 'call'>;

/**
 * Writes a new record and indexes it (a record already there is kept); `leaseMs` 0 (a queued
 * build): no lease until a replica adopts it. O(log n).
 */
export async function startEntry(
  connection: Calls,
  entry: BuildEntry & { replica: string },
  leaseMs: number,
): Promise<void> {
  const { id, replica } = entry;
  const indexes = [buildIndexKey('all'), ...indexedValues(entry).map(([f, v]) => buildIndexKey(f, v))];
  const change = JSON.stringify({ id, repository: entry.repository });
  await connection.call((client) =>
    START.run(
      client,
      [buildKey(id), buildAliveKey(id), ...indexes],
      [id, JSON.stringify(entry), entry.startedAtMs, leaseMs, replica, BUILD_CHANGES_CHANNEL, change],
    ),
  );
}

/** Takes the queued record `id` to run on `replica`, leased; false: it is no longer queued. O(log n). */
export async function adoptEntry(
  connection: Calls,
  id: string,
  replica: string,
  leaseMs: number,
): Promise<boolean> {
  const keys = [
    buildKey(id),
    buildAliveKey(id),
    buildIndexKey('status', 'queued'),
    buildIndexKey('status', 'running'),
  ];
  const adopted = (await connection.call((client) =>
    ADOPT.run(client, keys, [replica, leaseMs, BUILD_CHANGES_CHANNEL]),
  )) as number;
  return adopted === 1;
}

/**
 * Merges `patch` into the running record `id` and adds `delta` to its waiters; a branch learned
 * enters its index, a log opened is found by its id (for `logOwnerTtlMs`, or until the record leaves).
 */
export async function updateEntry(
  connection: Calls,
  id: string,
  patch: Record<string, unknown>,
  delta: number,
  logOwnerTtlMs: number,
): Promise<void> {
  const indexes = typeof patch.branch === 'string' ? [buildIndexKey('branch', patch.branch)] : [];
  const logs = [patch.gitCloneLogId, patch.imageBuildLogId].filter((v) => typeof v === 'string');
  const keys = [buildKey(id), ...indexes, ...logs.map((log) => logOwnerKey(log as string))];
  const args = [
    JSON.stringify(patch),
    delta,
    indexes.length,
    Math.round(logOwnerTtlMs),
    BUILD_CHANGES_CHANNEL,
    delta === 0 ? '' : randomUUID(),
  ];
  await connection.call(async (client) => {
    await UPDATE.run(client, keys, args);
  });
}

/** Finishes the running record `id`; answers the ids that leave the history now. */
export async function finishEntry(
  connection: Calls,
  id: string,
  outcome: BuildOutcome,
  at: EndingContext,
): Promise<string[]> {
  const leaving = await connection.call((client) =>
    FINISH.run(client, endingKeys(id, outcome.status), [...endingArgs(id, at), JSON.stringify(outcome)]),
  );
  return Array.isArray(leaving) ? (leaving as string[]) : [];
}
