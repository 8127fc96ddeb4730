/**
 * The schedule lock of Redis mode (docs/redis.md): a key holding its holder's random token with a
 * lease; taking and renewing are one Lua script (renewed only while it holds this token), so a
 * replica that stopped answering loses it once the lease runs out.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SCHEDULE_LOCK } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { ScheduleLock } from './schedule-lock.js';

const HOLD = redisScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`);

const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export function redisScheduleLock(client: Redis, leaseMs: number): ScheduleLock {
  const token = randomUUID();
  return {
    hold: async () => (await HOLD.run(client, [SCHEDULE_LOCK], [token, leaseMs])) === 1,
    release: async () => {
      await RELEASE.run(client, [SCHEDULE_LOCK], [token]);
    },
  };
}
