/**
 * How a record of the Redis build registry ends, as the Lua its scripts share: finished (kept until
 * the history's bound or its days pass, moved between the status indexes, its end and change
 * published), lost with its replica's lease (the answer names the replica), or never started when
 * the queue lost it. Each change stays inside one script (atomic) whose keys are all in KEYS.
 */
import { ERRORS, serviceError } from '../errors/errors.js';
import {
  BUILD_CHANGES_CHANNEL,
  buildAliveKey,
  buildEndChannel,
  buildIndexKey,
  buildKey,
  FINISHED_BUILDS,
} from '../redis/keys.js';

/** In the lost answer's JSON, replaced by the replica's name (from the record) in Lua. */
const REPLICA_MARK = '@@replica@@';
export const NOT_STARTED_STATUS = ERRORS.BUILD_NOT_STARTED.status;
/** Ids a finish hands back to leave the history at most (the next finish takes the rest). */
const EVICT_BATCH = 16;

/** The KEYS of a script that may end build `id` with `status`: record, alive, queued, running, status, finished. */
export const endingKeys = (id: string, status: string): string[] => [
  buildKey(id),
  buildAliveKey(id),
  buildIndexKey('status', 'queued'),
  buildIndexKey('status', 'running'),
  buildIndexKey('status', status),
  FINISHED_BUILDS,
];

/** What a script that may end a build is given: the time, the history's bounds, the record's TTL. */
export interface EndingContext {
  readonly nowMs: number;
  readonly history: number;
  /** Finished builds that finished before this leave the history. */
  readonly keptSinceMs: number;
  /** A finished record's key expires after this (beyond historyDays: the sweep drops it first). */
  readonly recordTtlMs: number;
  /** A running record found without lease is lost to a read this long after the first (ms). */
  readonly lostAfterMs?: number;
}

/** ARGV[1..6] of an ending script (its own arguments follow). */
export const endingArgs = (id: string, at: EndingContext): (string | number)[] => [
  at.nowMs,
  Math.round(at.recordTtlMs),
  BUILD_CHANGES_CHANNEL,
  buildEndChannel(id),
  at.history,
  Math.floor(at.keptSinceMs),
];

/** The answer of a build lost with its replica (JSON, REPLICA_MARK where the name goes). */
export const LOST_BODY = JSON.stringify(serviceError('BUILD_LOST', { replica: REPLICA_MARK }).toBody());
/** The answer of a queued build the queue lost before it started (JSON, as LOST_BODY). */
export const NOT_STARTED_BODY = JSON.stringify(
  serviceError('BUILD_NOT_STARTED', {
    reason: `it left the queue without starting: its replica ${REPLICA_MARK} stopped or lost the shared store meanwhile`,
  }).toBody(),
);

/**
 * Lua shared by the ending scripts (KEYS as endingKeys, ARGV as endingArgs): `finish` ends an
 * entry and answers the ids that now leave the history (beyond its bound, or finished before
 * its days); `lose` finishes one as a failure naming its replica (the answer's body is given as
 * JSON with REPLICA_MARK where the replica's name goes).
 */
export const ENDINGS_LUA = `
local function leaving()
  local ids = {}
  local excess = redis.call('ZCARD', KEYS[6]) - tonumber(ARGV[5])
  if excess > 0 then ids = redis.call('ZRANGE', KEYS[6], 0, math.min(excess, ${EVICT_BATCH}) - 1) end
  local old = redis.call('ZRANGE', KEYS[6], '-inf', '(' .. ARGV[6], 'BYSCORE', 'LIMIT', 0, ${EVICT_BATCH})
  for _, id in ipairs(old) do table.insert(ids, id) end
  return ids
end
local function finish(entry, outcome)
  entry.phase = 'finished'
  entry.outcome = outcome
  entry.finishedAtMs = tonumber(ARGV[1])
  if outcome.image then entry.image = outcome.image end
  local text = cjson.encode(entry)
  redis.call('SET', KEYS[1], text, 'PX', ARGV[2])
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[3], entry.id)
  redis.call('ZREM', KEYS[4], entry.id)
  redis.call('ZADD', KEYS[5], entry.startedAtMs, entry.id)
  redis.call('ZADD', KEYS[6], ARGV[1], entry.id)
  redis.call('PUBLISH', ARGV[4], 'f')
  redis.call('PUBLISH', ARGV[3], cjson.encode({id = entry.id, repository = entry.repository}))
  return text
end
local function lose(entry, bodyJson, status)
  local body = cjson.decode(bodyJson)
  local replica = entry.replica or 'unknown'
  local s, e = string.find(body.error, '${REPLICA_MARK}', 1, true)
  if s then body.error = string.sub(body.error, 1, s - 1) .. replica .. string.sub(body.error, e + 1) end
  local seconds = math.max(0, (tonumber(ARGV[1]) - entry.startedAtMs) / 1000)
  local outcome = {status = 'failure', durationSeconds = seconds, error = body.error, answer = {status = status, body = body}}
  return finish(entry, outcome)
end
`;
