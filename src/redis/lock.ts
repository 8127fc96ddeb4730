/**
 * A lock of Redis mode: a key holding its holder's random token with a lease. Taking and renewing
 * are one Lua script (renewed only while it holds this token), letting go another (only by its
 * holder), so a replica that stopped answering loses it once the lease runs out. Each lock value
 * is one holder: the retention run lock and the prebuild schedules' lock (keys.ts).
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './connection.js';
import { redisScript } from './script.js';

/** KEYS: lock. ARGV: token, ms. Renews while held by the token; takes it when free. */
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

/** KEYS: lock. ARGV: token. Releases only the holder's lock. */
const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export class RedisLock {
  readonly #token = randomUUID();

  constructor(
    private readonly redis: Pick<RedisConnection, 'call'>,
    readonly key: string,
    readonly leaseMs: number,
  ) {}

  /** Takes the lock, or renews it when this holder has it; whether this holder has it now. */
  async hold(): Promise<boolean> {
    return (await this.redis.call((c) => HOLD.run(c, [this.key], [this.#token, this.leaseMs]))) === 1;
  }

  /** Lets it go, when this holder has it. */
  async release(): Promise<void> {
    await this.redis.call((c) => RELEASE.run(c, [this.key], [this.#token]));
  }
}
