/**
 * The build registry of Redis mode: GET /builds on any replica lists the builds of all (docs/redis.md,
 * What is shared; Keys). A running build is one leased key, renewed while its replica lives, so a dead
 * replica's builds leave the list within LEASE_MS; the running index drops dangling ids when listed.
 * Every change is one Lua script (atomic): no read-modify-write from the service.
 */
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { buildKey, FINISHED_BUILDS, RUNNING_BUILDS } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import { matchesFilter, newBuildEntry, toRecord, type BuildEntry } from './records.js';
import type { BuildRegistry } from './types.js';

/** A running build's record expires this long after its replica's last renewal (renewed every third of it). */
export const LEASE_MS = 15_000;

const RUNNING = RUNNING_BUILDS;
const FINISHED = FINISHED_BUILDS;

/** KEYS: build, running. ARGV: id, record json, started ms, lease ms. */
const START = redisScript(`
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`);

/** KEYS: build. ARGV: patch json, waiters delta. Merges into a running record, keeping its lease. */
const UPDATE = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
for k, v in pairs(cjson.decode(ARGV[1])) do entry[k] = v end
entry.waiters = math.max(0, (entry.waiters or 0) + tonumber(ARGV[2]))
redis.call('SET', KEYS[1], cjson.encode(entry), 'KEEPTTL')
return 1
`);

/** KEYS: build, running, finished. ARGV: id, outcome json, now ms, history. */
const FINISH = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
local outcome = cjson.decode(ARGV[2])
entry.phase = 'finished'
entry.outcome = outcome
if outcome.image then entry.image = outcome.image end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local history = tonumber(ARGV[4])
if history > 0 then
  redis.call('ZADD', KEYS[3], ARGV[3], cjson.encode(entry))
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(history + 1))
end
return 1
`);

/** KEYS: the builds to renew. ARGV: lease ms. */
const RENEW = redisScript(`
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return 1
`);

/** KEYS: running, finished. ARGV: a build key without its id. Returns {running records, finished records}; drops expired ids. */
const LIST = redisScript(`
local running = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local text = redis.call('GET', ARGV[1] .. id)
  if text then table.insert(running, text) else redis.call('ZREM', KEYS[1], id) end
end
return {running, redis.call('ZRANGE', KEYS[2], 0, -1)}
`);

export interface RedisRegistryDeps {
  readonly connection: Pick<RedisConnection, 'client' | 'call'>;
  readonly history: number;
  readonly logger: Pick<Logger, 'warn'>;
  readonly now?: () => number;
  /** Default LEASE_MS (tests pass a short one). */
  readonly leaseMs?: number;
}

export interface RedisBuildRegistry extends BuildRegistry {
  /** Stops renewing leases (the process is ending). */
  close(): void;
}

export function createRedisBuildRegistry(deps: RedisRegistryDeps): RedisBuildRegistry {
  const { connection, logger } = deps;
  const now = deps.now ?? Date.now;
  const history = Math.max(0, Math.floor(deps.history));
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  /** The builds this replica runs: their leases are renewed. */
  const own = new Set<string>();
  const timer = setInterval(() => {
    if (own.size === 0) return;
    const keys = [...own].map(buildKey);
    RENEW.run(connection.client, keys, [leaseMs]).catch((err: unknown) => {
      logger.warn({ problem: (err as Error).message }, 'could not renew build leases');
    });
  }, leaseMs / 3);
  timer.unref();

  const update = (id: string, patch: Record<string, unknown>, delta = 0): Promise<void> =>
    connection.call(async (client) => {
      await UPDATE.run(client, [buildKey(id)], [JSON.stringify(patch), delta]);
    });

  return {
    async start(build) {
      const entry = newBuildEntry(build, now());
      const { id } = entry;
      await connection.call((client) =>
        START.run(client, [buildKey(id), RUNNING], [id, JSON.stringify(entry), entry.startedAtMs, leaseMs]),
      );
      own.add(id);
      return id;
    },
    update: (id, patch) => update(id, { ...patch }),
    addWaiters: (id, delta) => update(id, {}, delta),
    async finish(id, outcome) {
      own.delete(id);
      await connection.call((client) =>
        FINISH.run(client, [buildKey(id), RUNNING, FINISHED], [id, JSON.stringify(outcome), now(), history]),
      );
    },
    async list(filter = {}) {
      const [running, finished] = (await connection.call((client) =>
        LIST.run(client, [RUNNING, FINISHED], [buildKey('')]),
      )) as [string[], string[]];
      const at = now();
      return [...running, ...finished]
        .map((text) => JSON.parse(text) as BuildEntry)
        .filter((entry) => matchesFilter(entry, filter))
        .sort((a, b) => b.startedAtMs - a.startedAtMs)
        .map((entry) => toRecord(entry, at));
    },
    close() {
      clearInterval(timer);
    },
  };
}
