/**
 * How a record of the Redis build registry ends, as the Lua its scripts share: finished (moved to
 * the kept history, its end published), lost with its replica's lease (the answer names the
 * replica), or never started when the queue lost it. Each change stays inside one script (atomic).
 */
import { ERRORS, serviceError } from '../errors/errors.js';
import {
  BUILD_ALIVE_SUFFIX,
  BUILD_END_SUFFIX,
  buildAliveKey,
  buildKey,
  FINISHED_BUILDS,
  QUEUE_KEYS,
  RUNNING_BUILDS,
} from '../redis/keys.js';

/** In the lost answer's JSON, replaced by the replica's name (from the record) in Lua. */
const REPLICA_MARK = '@@replica@@';
/**
 * A queued record this old that the queue no longer holds ends as never started (its replica
 * writes the record, then queues it: a moment apart, unless it stops or loses Redis between).
 */
const ORPHAN_MS = 30_000;
export const NOT_STARTED_STATUS = ERRORS.BUILD_NOT_STARTED.status;

/** What the scripts append an id to (the alive key and channel follow from it: src/redis/keys.ts). */
export const BUILD_PREFIX = buildKey('');
/** The queue's waiting builds and its running ones (hashes by id, src/redis/keys.ts). */
export const QUEUE_HOLDS: readonly string[] = QUEUE_KEYS.slice(0, 2);
/** The KEYS of a script on one build: build, running, finished, alive, queue waiting, queue running. */
export const entryKeys = (id: string): string[] => [
  buildKey(id),
  RUNNING_BUILDS,
  FINISHED_BUILDS,
  buildAliveKey(id),
  ...QUEUE_HOLDS,
];

/** What a script that may end a build is given: the time, and how many finished records are kept. */
export interface EndingContext {
  readonly nowMs: number;
  readonly history: number;
}

/** The answer of a build lost with its replica (JSON, REPLICA_MARK where the name goes). */
export const LOST_BODY = JSON.stringify(serviceError('BUILD_LOST', { replica: REPLICA_MARK }).toBody());
/** The answer of a queued build the queue lost before it started (JSON, as LOST_BODY). */
export const NOT_STARTED_BODY = JSON.stringify(
  serviceError('BUILD_NOT_STARTED', {
    reason: `it left the queue without starting: its replica ${REPLICA_MARK} stopped or lost the shared store meanwhile`,
  }).toBody(),
);

/**
 * Lua shared by the scripts: `finish` moves a running entry to the finished set and publishes its
 * end; `lose` finishes one whose lease expired as a failure naming its replica (the answer's body
 * is given as JSON with REPLICA_MARK where the replica's name goes).
 */
export const ENDINGS_LUA = `
local ALIVE, ENDED = '${BUILD_ALIVE_SUFFIX}', '${BUILD_END_SUFFIX}'
local function finish(runningKey, finishedKey, id, entry, outcome, nowMs, history)
  entry.phase = 'finished'
  entry.outcome = outcome
  if outcome.image then entry.image = outcome.image end
  local buildKey = ARGV[1] .. id
  redis.call('DEL', buildKey, buildKey .. ALIVE)
  redis.call('ZREM', runningKey, id)
  if history > 0 then
    redis.call('ZADD', finishedKey, nowMs, cjson.encode(entry))
    redis.call('ZREMRANGEBYRANK', finishedKey, 0, -(history + 1))
  end
  redis.call('PUBLISH', buildKey .. ENDED, 'f')
  return entry
end
local function lose(runningKey, finishedKey, id, entry, nowMs, history, bodyJson, status)
  local body = cjson.decode(bodyJson)
  local replica = entry.replica or 'unknown'
  local s, e = string.find(body.error, '${REPLICA_MARK}', 1, true)
  if s then body.error = string.sub(body.error, 1, s - 1) .. replica .. string.sub(body.error, e + 1) end
  local seconds = math.max(0, (tonumber(nowMs) - entry.startedAtMs) / 1000)
  local outcome = {status = 'failure', durationSeconds = seconds, error = body.error, answer = {status = status or 500, body = body}}
  return finish(runningKey, finishedKey, id, entry, outcome, nowMs, history)
end
-- Whether the queue holds the build, waiting or running (its hashes of each, by id).
local function inQueue(waitingKey, runningKey, id)
  return redis.call('HEXISTS', waitingKey, id) == 1 or redis.call('HEXISTS', runningKey, id) == 1
end
-- A queued record older than ORPHAN_MS that the queue neither holds nor runs: its replica stopped
-- (or lost the store) between writing it and queueing it, or took it and never adopted it.
local function orphaned(waitingKey, runningKey, entry, nowMs)
  if tonumber(nowMs) - entry.startedAtMs < ${ORPHAN_MS} then return false end
  return not inQueue(waitingKey, runningKey, entry.id)
end
`;
