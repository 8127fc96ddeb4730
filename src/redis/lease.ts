/**
 * The one lease of Redis mode: a key holding its holder's token for LEASE_MS, taken, renewed and
 * released by Lua that acts only for that token. A replica that stopped answering loses what it
 * holds once the lease has run out, and another takes over. Used by the locks (lock.ts), a
 * subscription's deliverer, a running build's alive key and the build leases (docs/redis.md).
 */
import type { RedisCommander } from 'ioredis';
import { redisScript } from './script.js';

/** How long what a replica holds in Redis outlives its last renewal. */
export const LEASE_MS = 15_000;

/**
 * Lua for scripts that act on a lease among other keys (a record's start, a build's outcome):
 * `lease_take(key, token, ms)` answers 2 (taken now), 1 (renewed: the token held it) or the
 * holder's token; `lease_held(key, token)` whether the token holds it.
 */
export const LEASE_LUA = `
local function lease_held(key, token) return redis.call('GET', key) == token end
local function lease_take(key, token, ms)
  local holder = redis.call('GET', key)
  if not holder then redis.call('SET', key, token, 'PX', ms) return 2 end
  if holder == token then redis.call('PEXPIRE', key, ms) return 1 end
  return holder
end
`;

/** KEYS: lease. ARGV: token, ms. */
const TAKE = redisScript(`${LEASE_LUA}
return lease_take(KEYS[1], ARGV[1], ARGV[2])
`);

/** KEYS: lease. ARGV: ms, token. Returns 1 when renewed, 0 when the token no longer holds it. */
const RENEW = redisScript(`${LEASE_LUA}
if not lease_held(KEYS[1], ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`);

/** KEYS: lease. ARGV: token. */
const RELEASE = redisScript(`${LEASE_LUA}
if lease_held(KEYS[1], ARGV[1]) then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** What taking a lease found: taken now, renewed (the token held it), or held by another token. */
export type LeaseTake =
  | { readonly kind: 'taken' }
  | { readonly kind: 'renewed' }
  | { readonly kind: 'held'; readonly holder: string };

/** A lease as a key and the token that holds it (or wants to). */
export interface LeaseHold {
  readonly key: string;
  readonly token: string;
}

/** Takes the lease when free, renews it when `token` holds it. */
export async function takeLease(client: RedisCommander, lease: LeaseHold, ms: number): Promise<LeaseTake> {
  const answer = await TAKE.run(client, [lease.key], [lease.token, ms]);
  if (answer === 2) return { kind: 'taken' };
  if (answer === 1) return { kind: 'renewed' };
  return { kind: 'held', holder: String(answer) };
}

/**
 * Renews each lease its token holds; answers the keys of those it no longer holds. One script per
 * lease (each lease is in a slot of its own on a cluster), sent together: one round trip per node.
 */
export async function renewLeases(
  client: RedisCommander,
  leases: readonly LeaseHold[],
  ms: number,
): Promise<Set<string>> {
  const renewed = await Promise.all(leases.map((lease) => RENEW.run(client, [lease.key], [ms, lease.token])));
  return new Set(leases.filter((_, i) => renewed[i] !== 1).map((lease) => lease.key));
}

/** Lets the lease go when `token` holds it; whether it did. */
export async function releaseLease(client: RedisCommander, lease: LeaseHold): Promise<boolean> {
  return (await RELEASE.run(client, [lease.key], [lease.token])) === 1;
}
