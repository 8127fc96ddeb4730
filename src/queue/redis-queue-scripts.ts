/**
 * The Lua of Redis mode's queue (docs/queue.md): each change one atomic script given every key it
 * touches in KEYS (QUEUE_KEYS of src/redis/keys.ts, one hash tag, one Cluster slot). Each is safe
 * to repeat with the same arguments (docs/redis.md); each script's cost is in its own comment.
 */
import { redisScript } from '../redis/script.js';

/** Shared by the scripts: the keys by name, an entry's members and counters, its removal. */
const COMMON = `
local ENTRIES, RUNNING, COUNTS, QUOTAS, OWNERS, TAKES, HELD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local function ringKey(l) return KEYS[8 + l] end
local function lineKey(l) return KEYS[11 + l] end
local function lanesKey(l) return KEYS[14 + l] end
local LEVEL = {api = 0, push = 1, reconcile = 2, refresh = 2}
local SEP = '\\0'
local ANY = '*'
local function pad(seq) return string.format('%015d', seq) end
local function depths()
  local c = redis.call('HMGET', COUNTS, 'class:api', 'class:push', 'class:reconcile', 'class:refresh')
  return {tonumber(c[1] or '0') or 0, tonumber(c[2] or '0') or 0, tonumber(c[3] or '0') or 0, tonumber(c[4] or '0') or 0}
end
-- An entry's stored value: seq, class, tenant, lane, then its JSON (never decoded here).
local function parse(id, value)
  local e = {id = id}
  local from = 1
  for _, field in ipairs({'seq', 'class', 'tenant', 'lane'}) do
    local at = string.find(value, SEP, from, true)
    e[field] = string.sub(value, from, at - 1)
    from = at + 1
  end
  e.json = string.sub(value, from)
  e.level = LEVEL[e.class]
  return e
end
local function lineMember(e) return e.tenant .. SEP .. e.seq .. SEP .. e.id end
local function laneMember(e) return e.tenant .. SEP .. e.lane .. SEP .. e.seq .. SEP .. e.id end
local function count(field, by)
  local n = redis.call('HINCRBY', COUNTS, field, by)
  if n <= 0 then redis.call('HDEL', COUNTS, field) end
  return n
end
-- Takes a waiting entry out of every structure; its tenant leaves the ring once nothing of it waits.
local function unlink(e)
  redis.call('HDEL', ENTRIES, e.id)
  redis.call('ZREM', lineKey(e.level), lineMember(e))
  redis.call('ZREM', lanesKey(e.level), laneMember(e))
  count('class:' .. e.class, -1)
  count('tenant:' .. e.tenant, -1)
  if count('level:' .. e.level .. ':' .. e.tenant, -1) <= 0 then redis.call('ZREM', ringKey(e.level), e.tenant) end
  if e.lane ~= ANY then
    redis.call('ZREM', HELD, e.lane .. SEP .. e.id)
    if redis.call('HINCRBY', OWNERS, e.lane, -1) <= 0 then redis.call('HDEL', OWNERS, e.lane) end
  end
end
-- A running build's value: tenant, since ms, replica, class, then the entry's JSON when any replica
-- may run it again ('' otherwise).
local function run(id, tenant, nowMs, replica, class, json)
  local value = table.concat({tenant, nowMs, replica, class, json}, SEP)
  if redis.call('HSETNX', RUNNING, id, value) == 1 then count('running:' .. tenant, 1) end
end
local function running(id)
  local value = redis.call('HGET', RUNNING, id)
  if not value then return nil end
  local r = {id = id, replica = '', class = '', json = ''}
  local from = 1
  for _, field in ipairs({'tenant', 'since', 'replica', 'class'}) do
    local at = string.find(value, SEP, from, true)
    if not at then
      r[field] = string.sub(value, from)
      return r
    end
    r[field] = string.sub(value, from, at - 1)
    from = at + 1
  end
  r.json = string.sub(value, from)
  return r
end
-- A running build no longer runs: its tenant's count frees; whether its tenant has builds waiting
-- under a quota (the replicas are then woken).
local function stop(r)
  redis.call('HDEL', RUNNING, r.id)
  count('running:' .. r.tenant, -1)
  return redis.call('HEXISTS', QUOTAS, r.tenant) == 1 and redis.call('HEXISTS', COUNTS, 'tenant:' .. r.tenant) == 1
end
-- Puts an entry at the end of its tenant's line at its level.
local function add(id, class, tenant, lane, json)
  local level = LEVEL[class]
  local e = {id = id, class = class, tenant = tenant, lane = lane, level = level, seq = pad(redis.call('HINCRBY', COUNTS, 'seq', 1))}
  redis.call('HSET', ENTRIES, id, e.seq .. SEP .. class .. SEP .. tenant .. SEP .. lane .. SEP .. json)
  redis.call('ZADD', lineKey(level), 0, lineMember(e))
  redis.call('ZADD', lanesKey(level), 0, laneMember(e))
  count('class:' .. class, 1)
  count('tenant:' .. tenant, 1)
  if count('level:' .. level .. ':' .. tenant, 1) == 1 then
    redis.call('ZADD', ringKey(level), redis.call('HINCRBY', COUNTS, 'turn', 1), tenant)
  end
  if lane ~= ANY then
    redis.call('ZADD', HELD, 0, lane .. SEP .. id)
    redis.call('HINCRBY', OWNERS, lane, 1)
  end
end
`;

/**
 * ARGV: id, class, tenant, lane, entry JSON, maxRunning ('' none), channel, the replica handing the
 * build back ('' none: a build it ran there no longer runs). Answers the depths. O(log n); an
 * enqueue of a build waiting or running (elsewhere) changes nothing.
 */
export const ENQUEUE = redisScript(`${COMMON}
local id, class, tenant, lane = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local r = running(id)
if r and ARGV[8] ~= '' and r.replica == ARGV[8] then
  stop(r)
  r = nil
end
if r or redis.call('HEXISTS', ENTRIES, id) == 1 then return depths() end
add(id, class, tenant, lane, ARGV[5])
if ARGV[6] == '' then redis.call('HDEL', QUOTAS, tenant) else redis.call('HSET', QUOTAS, tenant, ARGV[6]) end
redis.call('PUBLISH', ARGV[7], 'q')
return depths()
`);

/**
 * KEYS: QUEUE_KEYS, then the take's own key (queueTakeKey). ARGV: replica, now ms, takes kept, ms
 * the take's answer is kept. Answers {entry JSON or false, depths...}: the first tenant in ring
 * order under its quota with a build this replica may run gives its oldest such build, and is
 * served last of its level from now on. A take whose key holds an answer (a repeat) answers it.
 * The build runs from then on: its running value keeps the entry when any replica may run it, for
 * AGAIN if this replica dies.
 * O(log n) when the tenant whose turn it is may run, O(tenants) at worst (tenants at their quota,
 * or whose builds only another replica may run, are passed over).
 */
export const TAKE = redisScript(`${COMMON}
local replica, nowMs = ARGV[1], ARGV[2]
local TAKEN = KEYS[17]
local before = redis.call('GET', TAKEN)
if before then
  local d = depths()
  return {before, d[1], d[2], d[3], d[4]}
end
local function head(l, tenant, lane)
  local prefix = tenant .. SEP .. lane .. SEP
  local found = redis.call('ZRANGEBYLEX', lanesKey(l), '(' .. prefix, '(' .. tenant .. SEP .. lane .. '\\1', 'LIMIT', 0, 1)[1]
  if not found then return nil end
  return string.sub(found, #prefix + 1, #prefix + 15), string.sub(found, #prefix + 17)
end
local function eligible(tenant)
  local max = redis.call('HGET', QUOTAS, tenant)
  if not max then return true end
  return tonumber(redis.call('HGET', COUNTS, 'running:' .. tenant) or '0') < tonumber(max)
end
local CHUNK = 16
for l = 0, 2 do
  local from = 0
  while true do
    local tenants = redis.call('ZRANGE', ringKey(l), from, from + CHUNK - 1)
    for _, tenant in ipairs(tenants) do
      if eligible(tenant) then
        local seq, id = head(l, tenant, ANY)
        local ownSeq, ownId = head(l, tenant, replica)
        if ownSeq and (not seq or ownSeq < seq) then id = ownId end
        if id then
          -- The first write grows memory: Redis at maxmemory refuses it, and with it the whole take
          -- (a script's later writes are let through once one ran), so nothing leaves the queue.
          redis.call('LPUSH', TAKES, nowMs)
          redis.call('LTRIM', TAKES, 0, tonumber(ARGV[3]) - 1)
          local e = parse(id, redis.call('HGET', ENTRIES, id))
          unlink(e)
          if redis.call('ZSCORE', ringKey(l), tenant) then
            redis.call('ZADD', ringKey(l), redis.call('HINCRBY', COUNTS, 'turn', 1), tenant)
          end
          run(id, tenant, nowMs, replica, e.class, e.lane == ANY and e.json or '')
          redis.call('SET', TAKEN, e.json, 'PX', ARGV[4])
          local d = depths()
          return {e.json, d[1], d[2], d[3], d[4]}
        end
      end
    end
    if #tenants < CHUNK then break end
    from = from + CHUNK
  end
end
local d = depths()
return {false, d[1], d[2], d[3], d[4]}
`);

/** ARGV: id. Answers the depths once taken out, false when it did not wait. O(log n). */
export const REMOVE = redisScript(`${COMMON}
local value = redis.call('HGET', ENTRIES, ARGV[1])
if not value then return false end
unlink(parse(ARGV[1], value))
return depths()
`);

/**
 * ARGV: id, tenant, now ms, replica, class, entry JSON ('' when only this replica may run it).
 * O(1).
 */
export const STARTED = redisScript(`${COMMON}
run(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
`);

/**
 * ARGV: channel, then pairs of id and the replica it ran on ('' any). Each no longer runs there
 * (a build another replica runs since is kept); the replicas are woken when its tenant has a quota
 * and builds waiting. O(ids).
 */
export const ENDED = redisScript(`${COMMON}
local wake = false
for i = 2, #ARGV - 1, 2 do
  local r = running(ARGV[i])
  if r and (ARGV[i + 1] == '' or r.replica == ARGV[i + 1]) and stop(r) then wake = true end
end
if wake then redis.call('PUBLISH', ARGV[1], 'f') end
return 1
`);

/**
 * ARGV: channel, the replica that died, ids... Each build that ran there and that any replica may
 * run again waits again, at the end of its tenant's line; answers the ids queued again (a repeat
 * finds none: they no longer run there). O(log n) per id.
 */
export const AGAIN = redisScript(`${COMMON}
local again = {}
for i = 3, #ARGV do
  local r = running(ARGV[i])
  if r and r.replica == ARGV[2] and r.json ~= '' and LEVEL[r.class] then
    stop(r)
    if redis.call('HEXISTS', ENTRIES, r.id) == 0 then add(r.id, r.class, r.tenant, ANY, r.json) end
    table.insert(again, r.id)
  end
end
if #again > 0 then redis.call('PUBLISH', ARGV[1], 'q') end
return again
`);

/** ARGV: owner. Takes out every build only `owner` may run; answers their entries' JSON. */
export const DROP_HELD = redisScript(`${COMMON}
local prefix = ARGV[1] .. SEP
local dropped = {}
for _, member in ipairs(redis.call('ZRANGEBYLEX', HELD, '(' .. prefix, '(' .. ARGV[1] .. '\\1')) do
  local id = string.sub(member, #prefix + 1)
  local value = redis.call('HGET', ENTRIES, id)
  if value then
    local e = parse(id, value)
    unlink(e)
    table.insert(dropped, e.json)
  else
    redis.call('ZREM', HELD, member)
  end
end
return dropped
`);

/**
 * ARGV: ids... Answers, per id, {level, tenant, builds of its tenant and level ahead} (false when
 * not waiting), then per level {waiting, tenant, count, tenant, count...} in turn order.
 * O(tenants + ids).
 */
export const PLACES = redisScript(`${COMMON}
local builds = {}
for i = 1, #ARGV do
  local value = redis.call('HGET', ENTRIES, ARGV[i])
  if value then
    local e = parse(ARGV[i], value)
    local before = redis.call('ZLEXCOUNT', lineKey(e.level), '[' .. e.tenant .. SEP, '(' .. lineMember(e))
    builds[i] = {e.level, e.tenant, before}
  else
    builds[i] = false
  end
end
local d = depths()
local levels = {}
for l = 0, 2 do
  local ring = redis.call('ZRANGE', ringKey(l), 0, -1)
  local out = {({d[1], d[2], d[3] + d[4]})[l + 1]}
  for _, tenant in ipairs(ring) do
    table.insert(out, tenant)
    table.insert(out, tonumber(redis.call('HGET', COUNTS, 'level:' .. l .. ':' .. tenant) or '0') or 0)
  end
  levels[l + 1] = out
end
return {builds, levels}
`);
