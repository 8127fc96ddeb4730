/**
 * The Idempotency-Keys of POST /build in Redis mode, shared by every replica: a key is reserved
 * with the digest of its request's body, then bound to the build it started. A key whose build is
 * no longer kept is free again; Redis holds only the key's hash.
 */
import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connection.js';
import { idempotencyKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { KeyReservation } from './types.js';

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
const IDEMPOTENCY_TTL_MS = 7 * 24 * 3600 * 1000;

const redisKeyOf = (key: string): string => idempotencyKey(createHash('sha256').update(key).digest('hex'));

type Calls = Pick<RedisConnection, 'call'>;

/** Reserves `key` for a body of `digest`, or tells who holds it; `isKept`: whether a build's record is. */
export async function reserveKey(
  connection: Calls,
  key: string,
  digest: string,
  isKept: (buildId: string) => Promise<boolean>,
): Promise<KeyReservation> {
  const reserve = (force: boolean) =>
    connection.call((client) =>
      RESERVE.run(client, [redisKeyOf(key)], [digest, IDEMPOTENCY_TTL_MS, force ? 1 : 0]),
    ) as Promise<[string, string?, string?]>;
  const [kind, held = '', buildId = ''] = await reserve(false);
  if (kind === 'reserved') return { kind: 'reserved' };
  if (buildId !== '' && !(await isKept(buildId))) {
    await reserve(true);
    return { kind: 'reserved' };
  }
  return { kind: 'taken', sameBody: held === digest, ...(buildId === '' ? {} : { buildId }) };
}

/** Binds a reserved `key` to the build it started (a key released meanwhile stays free). */
export async function bindKey(connection: Calls, key: string, buildId: string): Promise<void> {
  await connection.call((client) => BIND.run(client, [redisKeyOf(key)], [buildId, IDEMPOTENCY_TTL_MS]));
}

export async function releaseKey(connection: Calls, key: string): Promise<void> {
  await connection.call((client) => client.del(redisKeyOf(key)));
}
