/**
 * The build registry of Redis mode: every replica lists, reads, long-polls and cancels the builds
 * of all (docs/redis.md, What is shared; Keys). A running build's record sits beside its alive key,
 * a lease (src/redis/lease.ts) its replica renews; a record whose lease has expired is finished as lost (naming the replica)
 * the next time any replica reads it. A finish is published on the build's channel; every change
 * is one Lua script (atomic): no read-modify-write from the service.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import {
  BUILD_ALIVE_SUFFIX,
  BUILD_CANCEL_CHANNEL,
  BUILD_END_SUFFIX,
  BUILD_QUEUE,
  buildAliveKey,
  buildEndChannel,
  buildKey,
  FINISHED_BUILDS,
  idempotencyKey,
  RUNNING_BUILDS,
} from '../redis/keys.js';
import { LEASE_LUA, LEASE_MS, renewLeases } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';
import { createSubscriptionHub } from '../redis/subscriptions.js';
import { ERRORS, serviceError } from '../errors/errors.js';
import { finishedWithin } from './finish-wait.js';
import { matchesFilter, newBuildEntry, toRecord, type BuildEntry } from './records.js';
import type {
  BuildFilter,
  BuildOutcome,
  BuildRecord,
  BuildRegistry,
  BuildUpdate,
  KeyReservation,
  NewBuild,
} from './types.js';

const RUNNING = RUNNING_BUILDS;
const FINISHED = FINISHED_BUILDS;
/** In the lost answer's JSON, replaced by the replica's name (from the record) in Lua. */
const REPLICA_MARK = '@@replica@@';
/**
 * A queued record this old that the queue no longer holds ends as never started (its replica
 * writes the record, then queues it: a moment apart, unless it stops or loses Redis between).
 */
const ORPHAN_MS = 30_000;
const NOT_STARTED_STATUS = ERRORS.BUILD_NOT_STARTED.status;

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

/**
 * Lua shared by the scripts: `finish` moves a running entry to the finished set and publishes its
 * end; `lose` finishes one whose lease expired as a failure naming its replica (the answer's body
 * is given as JSON with REPLICA_MARK where the replica's name goes).
 */
const FINISH_ENTRY = `
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
-- The ids the queue holds, waiting or running (read once per script).
local queueIds
local function inQueue(queueKey, id)
  if not queueIds then
    queueIds = {}
    local text = redis.call('GET', queueKey)
    if text then
      local queue = cjson.decode(text)
      for _, list in ipairs({queue.waiting or {}, queue.running or {}}) do
        for _, item in ipairs(list) do queueIds[item.id] = true end
      end
    end
  end
  return queueIds[id] == true
end
-- A queued record older than ORPHAN_MS that the queue neither holds nor runs: its replica stopped
-- (or lost the store) between writing it and queueing it, or took it and never adopted it.
local function orphaned(queueKey, entry, nowMs)
  if tonumber(nowMs) - entry.startedAtMs < ${ORPHAN_MS} then return false end
  return not inQueue(queueKey, entry.id)
end
`;

/** KEYS: build, running, finished. ARGV: build key prefix, id, outcome json, now ms, history. */
const FINISH = redisScript(`${FINISH_ENTRY}
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
finish(KEYS[2], KEYS[3], ARGV[2], cjson.decode(text), cjson.decode(ARGV[3]), ARGV[4], tonumber(ARGV[5]))
return 1
`);

/**
 * KEYS: build, running, finished, alive, queue. ARGV: build key prefix, id, now ms, history, lost
 * body json, not started body json. The record (running or kept finished); a running one whose
 * lease expired is finished as lost, a queued one the queue has lost as never started.
 */
const GET = redisScript(`${FINISH_ENTRY}
local text = redis.call('GET', KEYS[1])
if text then
  if redis.call('EXISTS', KEYS[4]) == 1 then return text end
  local entry = cjson.decode(text)
  local lost
  if entry.phase == 'queued' then
    if not orphaned(KEYS[5], entry, ARGV[3]) then return text end
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
 * KEYS: running, finished, queue. ARGV: build key prefix, now ms, history, lost body json, not
 * started body json. Returns {running records, finished records, ids finished as lost now}; a
 * running build whose lease expired is finished as lost, a queued one the queue has lost as never
 * started.
 */
const LIST = redisScript(`${FINISH_ENTRY}
local running, lostIds = {}, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local text = redis.call('GET', ARGV[1] .. id)
  local queued = text and string.find(text, '"phase":"queued"', 1, true)
  if not text then
    redis.call('ZREM', KEYS[1], id)
  elseif redis.call('EXISTS', ARGV[1] .. id .. ALIVE) == 1 then
    table.insert(running, text)
  elseif queued and not orphaned(KEYS[3], cjson.decode(text), ARGV[2]) then
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

/** KEYS: build, cancel channel. ARGV: by. Marks a running record as asked to cancel, and tells every replica. */
const CANCEL = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
entry.cancelledBy = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(entry))
redis.call('PUBLISH', KEYS[2], 'c')
return 1
`);

/** KEYS: idempotency key. ARGV: body digest, ttl ms, force (1: the key's build is no longer kept). */
const RESERVE = redisScript(`
if ARGV[3] == '1' or redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'digest', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'reserved'}
end
return {'taken', redis.call('HGET', KEYS[1], 'digest') or '', redis.call('HGET', KEYS[1], 'id') or ''}
`);

/** KEYS: idempotency key. ARGV: build id, ttl ms. */
const BIND = redisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

/**
 * An Idempotency-Key outlives no kept record (a key whose build is no longer kept is free again);
 * this bounds the keys of builds whose records were dropped without anyone asking for them.
 */
export const IDEMPOTENCY_TTL_MS = 7 * 24 * 3600 * 1000;

const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex');

export interface RedisRegistryDeps {
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'duplicate'>;
  readonly history: number;
  readonly logger: Pick<Logger, 'warn'>;
  /** This replica's name, given in the answer of its builds lost with it. */
  readonly replica: string;
  readonly now?: () => number;
  /** Default LEASE_MS (tests pass a short one). */
  readonly leaseMs?: number;
}

export interface RedisBuildRegistry extends BuildRegistry {
  /** Stops renewing leases and listening (the process is ending). */
  close(): void;
}

const entryKeys = (id: string): string[] => [buildKey(id), RUNNING, FINISHED, buildAliveKey(id), BUILD_QUEUE];
/** What the scripts append an id to (the alive key and channel follow from it: src/redis/keys.ts). */
const PREFIX = buildKey('');

class RedisRegistry implements RedisBuildRegistry {
  readonly #deps: RedisRegistryDeps;
  readonly #now: () => number;
  readonly #history: number;
  readonly #leaseMs: number;
  readonly #hub: ReturnType<typeof createSubscriptionHub>;
  readonly #lostBody = JSON.stringify(serviceError('BUILD_LOST', { replica: REPLICA_MARK }).toBody());
  readonly #notStartedBody = JSON.stringify(
    serviceError('BUILD_NOT_STARTED', {
      reason: `it left the queue without starting: its replica ${REPLICA_MARK} stopped or lost the shared store meanwhile`,
    }).toBody(),
  );
  /** Told of each build this replica's read finished as lost (its events are sent here). */
  readonly #lostListeners: ((record: BuildRecord) => void)[] = [];
  /** The builds this replica runs: their leases are renewed. */
  readonly #own = new Set<string>();
  readonly #stop = new AbortController();
  readonly #timer: NodeJS.Timeout;

  constructor(deps: RedisRegistryDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#history = Math.max(0, Math.floor(deps.history));
    this.#leaseMs = deps.leaseMs ?? LEASE_MS;
    this.#hub = createSubscriptionHub(deps.connection);
    this.#timer = setInterval(() => this.#renew(), this.#leaseMs / 3);
    this.#timer.unref();
  }

  #renew(): void {
    if (this.#own.size === 0) return;
    const { replica, connection } = this.#deps;
    const leases = [...this.#own].map((id) => ({ key: buildAliveKey(id), token: replica }));
    renewLeases(connection.client, leases, this.#leaseMs).catch((err: unknown) => {
      this.#deps.logger.warn({ problem: (err as Error).message }, 'could not renew build leases');
    });
  }

  async #update(id: string, patch: Record<string, unknown>, delta = 0): Promise<void> {
    await this.#deps.connection.call(async (client) => {
      await UPDATE.run(client, [buildKey(id)], [JSON.stringify(patch), delta]);
    });
  }

  async #readEntry(id: string): Promise<(BuildEntry & { cancelledBy?: string }) | undefined> {
    const text = (await this.#deps.connection.call((client) =>
      GET.run(client, entryKeys(id), [
        PREFIX,
        id,
        this.#now(),
        this.#history,
        this.#lostBody,
        this.#notStartedBody,
      ]),
    )) as string | null;
    if (typeof text !== 'string') return undefined;
    const entry = JSON.parse(text) as BuildEntry & { lostNow?: boolean };
    if (entry.lostNow === true) {
      delete entry.lostNow;
      this.#tellLost(entry);
    }
    return entry;
  }

  onLost(listener: (record: BuildRecord) => void): void {
    this.#lostListeners.push(listener);
  }

  /** A build this read finished as lost: told once, by the one replica whose read did it. */
  #tellLost(entry: BuildEntry): void {
    const record = toRecord(entry, this.#now());
    for (const listener of this.#lostListeners) listener(record);
  }

  async start(build: NewBuild): Promise<string> {
    const { replica } = this.#deps;
    const entry = { ...newBuildEntry(build, this.#now()), replica };
    const { id } = entry;
    await this.#deps.connection.call((client) =>
      START.run(
        client,
        [buildKey(id), RUNNING, buildAliveKey(id)],
        [id, JSON.stringify(entry), entry.startedAtMs, build.queued === true ? 0 : this.#leaseMs, replica],
      ),
    );
    if (build.queued !== true) this.#own.add(id);
    return id;
  }

  async adopt(id: string): Promise<boolean> {
    const { replica } = this.#deps;
    const adopted = (await this.#deps.connection.call((client) =>
      ADOPT.run(client, [buildKey(id), buildAliveKey(id)], [replica, this.#leaseMs]),
    )) as number;
    if (adopted !== 1) return false;
    this.#own.add(id);
    return true;
  }

  update(id: string, patch: BuildUpdate): Promise<void> {
    return this.#update(id, { ...patch });
  }

  addWaiters(id: string, delta: number): Promise<void> {
    return this.#update(id, {}, delta);
  }

  async finish(id: string, outcome: BuildOutcome): Promise<void> {
    this.#own.delete(id);
    await this.#deps.connection.call((client) =>
      FINISH.run(client, entryKeys(id), [PREFIX, id, JSON.stringify(outcome), this.#now(), this.#history]),
    );
  }

  async list(filter: BuildFilter = {}): Promise<BuildRecord[]> {
    const [running, finished, lostIds] = (await this.#deps.connection.call((client) =>
      LIST.run(
        client,
        [RUNNING, FINISHED, BUILD_QUEUE],
        [PREFIX, this.#now(), this.#history, this.#lostBody, this.#notStartedBody],
      ),
    )) as [string[], string[], string[]];
    const at = this.#now();
    const entries = [...running, ...finished].map((text) => JSON.parse(text) as BuildEntry);
    for (const entry of entries)
      if (lostIds.includes(entry.id) && entry.phase === 'finished') this.#tellLost(entry);
    return entries
      .filter((entry) => matchesFilter(entry, filter))
      .sort((a, b) => b.startedAtMs - a.startedAtMs)
      .map((entry) => toRecord(entry, at));
  }

  async get(id: string): Promise<BuildRecord | undefined> {
    const entry = await this.#readEntry(id);
    return entry === undefined ? undefined : toRecord(entry, this.#now());
  }

  waitFinished(id: string, ms: number, signal?: AbortSignal): Promise<BuildRecord | undefined> {
    const watch = async (wake: () => void): Promise<() => void> => {
      const sub = await this.#hub.subscribe(buildEndChannel(id));
      const stopWaiting = new AbortController();
      void sub.changeSince(sub.version(), stopWaiting.signal).then(wake);
      return () => {
        stopWaiting.abort();
        sub.release();
      };
    };
    // A replica that died publishes nothing: its lease is read again once it may have expired.
    return finishedWithin((i) => this.get(i), id, ms, signal, watch, this.#leaseMs);
  }

  async requestCancel(id: string, by: string): Promise<void> {
    await this.#deps.connection.call((client) =>
      CANCEL.run(client, [buildKey(id), BUILD_CANCEL_CHANNEL], [by]),
    );
  }

  onCancel(listener: (id: string, by: string) => void): void {
    this.#listenForCancels(listener).catch((err: unknown) => {
      this.#deps.logger.warn({ problem: (err as Error).message }, 'could not listen for build cancellations');
    });
  }

  /** Hears every cancel asked for; each of this replica's builds asked to be cancelled is told once. */
  async #listenForCancels(listener: (id: string, by: string) => void): Promise<void> {
    const told = new Set<string>();
    const sub = await this.#hub.subscribe(BUILD_CANCEL_CHANNEL);
    try {
      for (let seen = sub.version(); !this.#stop.signal.aborted; seen = sub.version()) {
        for (const id of this.#own) {
          const entry = await this.#readEntry(id).catch(() => undefined);
          if (entry?.cancelledBy !== undefined && !told.has(id)) {
            told.add(id);
            listener(id, entry.cancelledBy);
          }
        }
        await sub.changeSince(seen, this.#stop.signal);
      }
    } finally {
      sub.release();
    }
  }

  async reserveKey(key: string, digest: string): Promise<KeyReservation> {
    const reserve = (force: boolean) =>
      this.#deps.connection.call((client) =>
        RESERVE.run(client, [idempotencyKey(keyHash(key))], [digest, IDEMPOTENCY_TTL_MS, force ? 1 : 0]),
      ) as Promise<[string, string?, string?]>;
    const [kind, held = '', buildId = ''] = await reserve(false);
    if (kind === 'reserved') return { kind: 'reserved' };
    if (buildId !== '' && (await this.get(buildId)) === undefined) {
      await reserve(true);
      return { kind: 'reserved' };
    }
    return { kind: 'taken', sameBody: held === digest, ...(buildId === '' ? {} : { buildId }) };
  }

  async bindKey(key: string, buildId: string): Promise<void> {
    await this.#deps.connection.call((client) =>
      BIND.run(client, [idempotencyKey(keyHash(key))], [buildId, IDEMPOTENCY_TTL_MS]),
    );
  }

  async releaseKey(key: string): Promise<void> {
    await this.#deps.connection.call((client) => client.del(idempotencyKey(keyHash(key))));
  }

  close(): void {
    clearInterval(this.#timer);
    this.#stop.abort();
    void this.#hub.close();
  }
}

export function createRedisBuildRegistry(deps: RedisRegistryDeps): RedisBuildRegistry {
  return new RedisRegistry(deps);
}
