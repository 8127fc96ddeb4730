/**
 * Build leases of Redis mode (leases.ts): identical builds follow one across replicas (docs/redis.md,
 * Following across replicas; Keys): a src/redis/lease.ts lease per build key, whose release leaves
 * the outcome. A follower subscribes, then reads the lease's PTTL and outcome on each message and
 * once that PTTL has passed (no polling): reading after subscribing closes the race with a release;
 * a lease gone without an outcome means its replica died: the follower builds.
 */
import { randomUUID } from 'node:crypto';
import { reasonOf } from '../../src/errors/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { leaseChannel, leaseKey, leaseOutcomeKey } from '../../src/redis/keys.js';
import { redisScript } from '../../src/redis/script.js';
import { LEASE_LUA, LEASE_MS, renewLeases, takeLease } from '../../src/redis/lease.js';
import {
  createSubscriptionHub,
  type SubscriptionHub,
  type Subscription,
} from '../../src/redis/subscriptions.js';
import {
  STOPPED_WAITING,
  type BuildLeases,
  type BuiltImage,
  type FollowedBuild,
  type FollowedOutcome,
  type LeaseRole,
} from './leases.js';
import type { AnsweredCommits } from './answered-commits.js';
import { createRedisAnsweredCommits } from './redis-answered-commits.js';
import { redisRecentStore, type RecentStore } from './recent-store.js';

/** A released lease's outcome stays readable this long (for followers that subscribed just then). */
const OUTCOME_TTL_MS = 60_000;
/** A follower reads the state again this long after the lease's PTTL has passed. */
const EXPIRY_GRACE_MS = 250;
/** Tries in a row that found a lease gone before they could follow it (then: build without a lease). */
const HOLD_ATTEMPTS = 3;

const outcomeKey = leaseOutcomeKey;
const channelOf = leaseChannel;

export const LEASE_LOST =
  'the build with the same key left no outcome: its replica stopped renewing the lease';
const REMOTE_FAILED = 'the build with the same key failed on its replica';
const UNREACHABLE =
  'the shared store (Redis) became unreachable while waiting for the build with the same key';

/** KEYS: lease, outcome. ARGV: token, outcome json, outcome ttl ms, channel. */
const RELEASE = redisScript(`${LEASE_LUA}
if not lease_held(KEYS[1], ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], 'e')
return 1
`);

/** KEYS: lease, outcome. ARGV: holder token. Returns {PTTL while the holder holds the lease, else -2; outcome json or ''}. */
const STATE = redisScript(`${LEASE_LUA}
local pttl = -2
if lease_held(KEYS[1], ARGV[1]) then pttl = redis.call('PTTL', KEYS[1]) end
return {pttl, redis.call('GET', KEYS[2]) or ''}
`);

interface StoredOutcome {
  readonly token: string;
  readonly built?: BuiltImage;
}

const isBuiltImage = (value: unknown): value is BuiltImage =>
  typeof value === 'object' &&
  value !== null &&
  ['image', 'registry', 'name', 'tag'].every(
    (k) => typeof (value as Record<string, unknown>)[k] === 'string',
  );

/** The holder's outcome in `text`, or undefined when there is none (yet) for this holder. */
function outcomeOf(text: string, holder: string): FollowedOutcome | undefined {
  if (text === '') return undefined;
  const stored = JSON.parse(text) as StoredOutcome;
  if (stored.token !== holder) return undefined;
  return isBuiltImage(stored.built) ? { ok: true, built: stored.built } : { ok: false, why: REMOTE_FAILED };
}

/** Resolves on a message of the subscription since `seen`, after `ms`, or when `signal` aborts. */
async function changeOrTimeout(
  subscription: Subscription,
  seen: number,
  ms: number,
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) return;
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      subscription.changeSince(seen, stop.signal),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    signal.removeEventListener('abort', onAbort);
  }
}

export interface RedisLeasesDeps {
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'subscriber'>;
  readonly logger: Pick<Logger, 'warn'>;
  /** Default LEASE_MS (tests pass a short one). */
  readonly leaseMs?: number;
}

/**
 * The leases this replica holds (id -> token), renewed every third of the lease period while it
 * lives; a lease found held by another token is dropped (its followers build themselves).
 */
class HeldLeases {
  readonly #own = new Map<string, string>();
  readonly #deps: Required<RedisLeasesDeps>;
  readonly #timer: NodeJS.Timeout;

  constructor(deps: Required<RedisLeasesDeps>) {
    this.#deps = deps;
    this.#timer = setInterval(() => this.#renew(), deps.leaseMs / 3);
    this.#timer.unref();
  }

  hold(id: string, token: string): void {
    this.#own.set(id, token);
  }

  /** Stops renewing `id`; false when `token` no longer holds it here. */
  drop(id: string, token: string): boolean {
    if (this.#own.get(id) !== token) return false;
    this.#own.delete(id);
    return true;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #renew(): void {
    if (this.#own.size === 0) return;
    const { connection, logger, leaseMs } = this.#deps;
    const held = [...this.#own];
    renewLeases(
      connection.client,
      held.map(([id, token]) => ({ key: leaseKey(id), token })),
      leaseMs,
    ).then(
      (lost) => this.#lost(held, lost),
      (err: unknown) => logger.warn({ problem: reasonOf(err) }, 'could not renew build leases'),
    );
  }

  /** The leases of `held` that RENEW found no longer held (`lost`, by key) and still held here. */
  #lost(held: ReadonlyArray<readonly [string, string]>, lost: ReadonlySet<string>): void {
    for (const [id, token] of held) {
      if (!lost.has(leaseKey(id)) || !this.drop(id, token)) continue;
      this.#deps.logger.warn(
        { lease: id },
        'build lease lost: its followers on other replicas build themselves',
      );
    }
  }
}

/** A build with the same key on another replica: followed at most once (the watch owns the subscription). */
class RemoteBuild implements FollowedBuild {
  readonly where = 'another replica';
  readonly #watch: (signal: AbortSignal) => Promise<FollowedOutcome>;
  #waited = false;

  constructor(watch: (signal: AbortSignal) => Promise<FollowedOutcome>) {
    this.#watch = watch;
  }

  wait(signal: AbortSignal): Promise<FollowedOutcome> | undefined {
    if (this.#waited) return undefined;
    this.#waited = true;
    return this.#watch(signal);
  }
}

/** A lease as its follower reads it: its PTTL while `holder` holds it (else -2), and its outcome. */
interface LeaseState {
  readonly pttl: number;
  readonly outcome: FollowedOutcome | undefined;
}

class RedisBuildLeases implements BuildLeases {
  readonly #deps: Required<RedisLeasesDeps>;
  readonly #hub: SubscriptionHub;
  readonly #held: HeldLeases;
  readonly answered: AnsweredCommits;
  readonly recent: RecentStore;

  constructor(deps: Required<RedisLeasesDeps>) {
    this.#deps = deps;
    this.answered = createRedisAnsweredCommits(deps.connection);
    this.recent = redisRecentStore(deps.connection);
    this.#hub = createSubscriptionHub(deps.connection);
    this.#held = new HeldLeases(deps);
  }

  async holdOrFollow(id: string, options: { readonly follow: boolean }): Promise<LeaseRole> {
    const { connection, leaseMs } = this.#deps;
    for (let attempt = 0; attempt < HOLD_ATTEMPTS; attempt += 1) {
      const token = randomUUID();
      const taken = await connection.call((client) =>
        takeLease(client, { key: leaseKey(id), token }, leaseMs),
      );
      if (taken.kind !== 'held') return this.#hold(id, token);
      if (!options.follow) break;
      const build = await this.#follow(id, taken.holder);
      if (build !== undefined) return { kind: 'follow', build };
    }
    return { kind: 'unshared' };
  }

  async close(): Promise<void> {
    this.#held.stop();
    await this.#hub.close();
  }

  #hold(id: string, token: string): LeaseRole {
    this.#held.hold(id, token);
    return { kind: 'hold', lease: { release: (built) => this.#release(id, token, built) } };
  }

  async #release(id: string, token: string, built: BuiltImage | undefined): Promise<void> {
    if (!this.#held.drop(id, token)) return;
    const stored: StoredOutcome = {
      token,
      ...(built === undefined
        ? {}
        : { built: { image: built.image, registry: built.registry, name: built.name, tag: built.tag } }),
    };
    try {
      await RELEASE.run(
        this.#deps.connection.client,
        [leaseKey(id), outcomeKey(id)],
        [token, JSON.stringify(stored), OUTCOME_TTL_MS, channelOf(id)],
      );
    } catch (err) {
      this.#deps.logger.warn(
        { lease: id, problem: reasonOf(err) },
        'could not release a build lease: its followers build themselves once it expires',
      );
    }
  }

  async #readState(id: string, holder: string): Promise<LeaseState> {
    const [pttl, text] = (await this.#deps.connection.call((client) =>
      STATE.run(client, [leaseKey(id), outcomeKey(id)], [holder]),
    )) as [number, string];
    return { pttl, outcome: outcomeOf(text, holder) };
  }

  /** Subscribes to the holder's outcome; undefined when its lease is gone without one (then: try to hold it). */
  async #follow(id: string, holder: string): Promise<FollowedBuild | undefined> {
    const subscription = await this.#deps.connection.call(() => this.#hub.subscribe(channelOf(id)));
    let state: LeaseState;
    try {
      state = await this.#readState(id, holder);
    } catch (err) {
      subscription.release();
      throw err;
    }
    if (state.outcome === undefined && state.pttl <= 0) {
      subscription.release();
      return undefined;
    }
    return new RemoteBuild((signal) => this.#watch(id, holder, subscription, signal));
  }

  /** Reads the state on each message and once the lease's PTTL has passed, until an outcome. */
  async #watch(
    id: string,
    holder: string,
    subscription: Subscription,
    signal: AbortSignal,
  ): Promise<FollowedOutcome> {
    try {
      while (!signal.aborted) {
        const seen = subscription.version();
        const state = await this.#readState(id, holder);
        if (state.outcome !== undefined) return state.outcome;
        if (state.pttl <= 0) return { ok: false, why: LEASE_LOST, lost: true };
        await changeOrTimeout(subscription, seen, state.pttl + EXPIRY_GRACE_MS, signal);
      }
      return { ok: false, why: STOPPED_WAITING };
    } catch {
      return { ok: false, why: UNREACHABLE };
    } finally {
      subscription.release();
    }
  }
}

export function createRedisBuildLeases(deps: RedisLeasesDeps): BuildLeases {
  return new RedisBuildLeases({ ...deps, leaseMs: deps.leaseMs ?? LEASE_MS });
}
