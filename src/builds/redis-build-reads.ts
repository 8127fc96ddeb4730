/**
 * The reads of the Redis build registry, one record or all, each one Lua script that also sweeps:
 * a running record whose lease expired is finished as lost, a queued one the queue lost as never
 * started. No sweeper runs apart: the replica whose read ended a build is the one that tells of it.
 */
import type { RedisConnection } from '../redis/connection.js';
import { FINISHED_BUILDS, RUNNING_BUILDS } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import {
  BUILD_PREFIX,
  ENDINGS_LUA,
  entryKeys,
  type EndingContext,
  LOST_BODY,
  NOT_STARTED_BODY,
  NOT_STARTED_STATUS,
  QUEUE_HOLDS,
} from './redis-build-endings.js';
import type { BuildEntry } from './records.js';

/**
 * KEYS: build, running, finished, alive, queue waiting, queue running. ARGV: build key prefix, id, now ms, history, lost
 * body json, not started body json. The record (running or kept finished); a running one whose
 * lease expired is finished as lost, a queued one the queue has lost as never started.
 */
const GET = redisScript(`${ENDINGS_LUA}
local text = redis.call('GET', KEYS[1])
if text then
  if redis.call('EXISTS', KEYS[4]) == 1 then return text end
  local entry = cjson.decode(text)
  local lost
  if entry.phase == 'queued' then
    if not orphaned(KEYS[5], KEYS[6], entry, ARGV[3]) then return text end
    lost = lose(KEYS[2], KEYS[3], ARGV[2], entry, ARGV[3], tonumber(ARGV[4]), ARGV[6], ${NOT_STARTED_STATUS})
  else
    lost = lose(KEYS[2], KEYS[3], ARGV[2], entry, ARGV[3], tonumber(ARGV[4]), ARGV[5])
  end
  lost.lostNow = true
  return cjson.encode(lost)
end
local needle = '"id":"' .. ARGV[2] .. '"'
for _, item in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if string.find(item, needle, 1, true) then return item end
end
return false
`);

/**
 * KEYS: running, finished, queue waiting, queue running. ARGV: build key prefix, now ms, history, lost body json, not
 * started body json. Returns {running records, finished records, ids finished as lost now}; a
 * running build whose lease expired is finished as lost, a queued one the queue has lost as never
 * started.
 */
const LIST = redisScript(`${ENDINGS_LUA}
local running, lostIds = {}, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local text = redis.call('GET', ARGV[1] .. id)
  local queued = text and string.find(text, '"phase":"queued"', 1, true)
  if not text then
    redis.call('ZREM', KEYS[1], id)
  elseif redis.call('EXISTS', ARGV[1] .. id .. ALIVE) == 1 then
    table.insert(running, text)
  elseif queued and not orphaned(KEYS[3], KEYS[4], cjson.decode(text), ARGV[2]) then
    table.insert(running, text)
  elseif queued then
    lose(KEYS[1], KEYS[2], id, cjson.decode(text), ARGV[2], tonumber(ARGV[3]), ARGV[5], ${NOT_STARTED_STATUS})
    table.insert(lostIds, id)
  else
    lose(KEYS[1], KEYS[2], id, cjson.decode(text), ARGV[2], tonumber(ARGV[3]), ARGV[4])
    table.insert(lostIds, id)
  end
end
return {running, redis.call('ZRANGE', KEYS[2], 0, -1), lostIds}
`);

type Calls = Pick<RedisConnection, 'call'>;

/** A record as Redis keeps it: a running one may carry who asked to cancel it. */
export type StoredEntry = BuildEntry & { cancelledBy?: string };

/** The record of build `id`; `lostNow`: this read finished it (lost, or never started). */
export async function readEntry(
  connection: Calls,
  id: string,
  { nowMs, history }: EndingContext,
): Promise<{ entry: StoredEntry; lostNow: boolean } | undefined> {
  const text = (await connection.call((client) =>
    GET.run(client, entryKeys(id), [BUILD_PREFIX, id, nowMs, history, LOST_BODY, NOT_STARTED_BODY]),
  )) as string | null;
  if (typeof text !== 'string') return undefined;
  const { lostNow, ...entry } = JSON.parse(text) as StoredEntry & { lostNow?: boolean };
  return { entry, lostNow: lostNow === true };
}

/** Every record, running then finished; `lostIds`: the builds this read finished. */
export async function listEntries(
  connection: Calls,
  { nowMs, history }: EndingContext,
): Promise<{ entries: BuildEntry[]; lostIds: string[] }> {
  const [running, finished, lostIds] = (await connection.call((client) =>
    LIST.run(
      client,
      [RUNNING_BUILDS, FINISHED_BUILDS, ...QUEUE_HOLDS],
      [BUILD_PREFIX, nowMs, history, LOST_BODY, NOT_STARTED_BODY],
    ),
  )) as [string[], string[], string[]];
  return { entries: [...running, ...finished].map((text) => JSON.parse(text) as BuildEntry), lostIds };
}
