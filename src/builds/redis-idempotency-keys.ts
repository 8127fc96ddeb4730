/**
 * The Idempotency-Keys of POST /build in Redis mode, shared by every replica: a key is reserved
 * with the digest of its request's body, then bound to the build it started. A key whose build is
 * no longer kept is free again; so is a reservation never bound (its request ended before its
 * build was recorded: a replica stopped, the store failed over) once RESERVATION_MS have passed,
 * so that the caller's retry with the same key starts the build. Redis holds only the key's hash.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { RedisConnection } from '../redis/connection.js';
import { idempotencyKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { KeyReservation } from './types.js';

/**
 * KEYS: idempotency key. ARGV: body digest, reservation ms, force (1: the key's build is no longer
 * kept), the reservation's token (a repeat of it, its answer lost, is answered reserved again).
 */
const RESERVE = redisScript(`
if redis.call('HGET', KEYS[1], 'token') == ARGV[4] and redis.call('HEXISTS', KEYS[1], 'id') == 0 then
  return {'reserved'}
end
if ARGV[3] == '1' or redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'token', ARGV[4])
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
 * How long a reserved key waits to be bound (admission records a build within moments, a loaded
 * store within seconds); past it, the key is free again.
 */
const RESERVATION_MS = 30_000;

/**
 * An Idempotency-Key outlives no kept record (a key whose build is no longer kept is free again);
 * this bounds the keys of builds whose records were dropped without anyone asking for them.
 */
const IDEMPOTENCY_TTL_MS = 7 * 24 * 3600 * 1000;

const redisKeyOf = (key: string): string => idempotencyKey(createHash('sha256').update(key).digest('hex'));

type Calls = Pick<RedisConnection, 'call'>;

/**
 * Reserves `key` for a body of `digest` (for RESERVATION_MS, until bound), or tells who holds it;
 * `isKept`: whether a build's record is. O(1).
 */
export async function reserveKey(
  connection: Calls,
  key: string,
  digest: string,
  isKept: (buildId: string) => Promise<boolean>,
  token: string = randomUUID(),
): Promise<KeyReservation> {
  const reserve = (force: boolean) =>
    connection.call((client) =>
      RESERVE.run(client, [redisKeyOf(key)], [digest, RESERVATION_MS, force ? 1 : 0, token]),
    ) as Promise<[string, string?, string?]>;
  const [kind, held = '', buildId = ''] = await reserve(false);
  if (kind === 'reserved') return { kind: 'reserved', token };
  if (buildId !== '' && !(await isKept(buildId))) {
    await reserve(true);
    return { kind: 'reserved', token };
  }
  return { kind: 'taken', sameBody: held === digest, ...(buildId === '' ? {} : { buildId }) };
}

/** Binds a reserved `key` to the build it started, for IDEMPOTENCY_TTL_MS (a key released meanwhile stays free). O(1). */
export async function bindKey(connection: Calls, key: string, buildId: string): Promise<void> {
  await connection.call((client) => BIND.run(client, [redisKeyOf(key)], [buildId, IDEMPOTENCY_TTL_MS]));
}

/**
 * KEYS: idempotency key. ARGV: the reservation's token. Drops the reservation while that token
 * holds it and no build is bound (a bound key, or a later request's reservation, stays).
 */
const RELEASE = redisScript(`
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'id') == 0 then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * Frees `key` when no build was bound to it (its request queued nothing) and the reservation
 * `token` still holds it; safe to repeat, late or not. O(1).
 */
export async function releaseKey(connection: Calls, key: string, token: string): Promise<void> {
  await connection.call((client) => RELEASE.run(client, [redisKeyOf(key)], [token]));
}
