/**
 * The build registry of Redis mode: every replica lists, reads, long-polls and cancels the builds
 * of all (docs/redis.md, What is shared; Keys). It binds this replica to the scripts of its
 * concerns: writes, reads that finish lost builds, cancels, Idempotency-Keys, and the leases of
 * the builds it runs.
 */
import { reasonOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { buildEndChannel } from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { createSubscriptionHub, type SubscriptionHub } from '../redis/subscriptions.js';
import { channelWatch, finishedWithin } from './finish-wait.js';
import { matchesFilter, newBuildEntry, toRecord, type BuildEntry } from './records.js';
import { listenForCancels, requestCancel } from './redis-build-cancels.js';
import type { EndingContext } from './redis-build-endings.js';
import { listEntries, readEntry, type StoredEntry } from './redis-build-reads.js';
import { adoptEntry, finishEntry, startEntry, updateEntry } from './redis-build-writes.js';
import { bindKey, releaseKey, reserveKey } from './redis-idempotency-keys.js';
import { OwnBuilds } from './redis-own-builds.js';
import type {
  BuildFilter,
  BuildOutcome,
  BuildRecord,
  BuildRegistry,
  BuildUpdate,
  KeyReservation,
  NewBuild,
} from './types.js';

export { IDEMPOTENCY_TTL_MS } from './redis-idempotency-keys.js';

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

class RedisRegistry implements RedisBuildRegistry {
  readonly #deps: RedisRegistryDeps;
  readonly #now: () => number;
  readonly #history: number;
  readonly #leaseMs: number;
  readonly #hub: SubscriptionHub;
  /** Told of each build this replica's read finished as lost (its events are sent here). */
  readonly #lostListeners: ((record: BuildRecord) => void)[] = [];
  /** The builds this replica runs: their leases are renewed. */
  readonly #own: OwnBuilds;
  readonly #stop = new AbortController();

  constructor(deps: RedisRegistryDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#history = Math.max(0, Math.floor(deps.history));
    this.#leaseMs = deps.leaseMs ?? LEASE_MS;
    this.#hub = createSubscriptionHub(deps.connection);
    this.#own = new OwnBuilds(deps.connection, deps.replica, this.#leaseMs, deps.logger);
  }

  #ending(): EndingContext {
    return { nowMs: this.#now(), history: this.#history };
  }

  async #readEntry(id: string): Promise<StoredEntry | undefined> {
    const read = await readEntry(this.#deps.connection, id, this.#ending());
    if (read?.lostNow === true) this.#tellLost(read.entry);
    return read?.entry;
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
    const entry = { ...newBuildEntry(build, this.#now()), replica: this.#deps.replica };
    await startEntry(this.#deps.connection, entry, build.queued === true ? 0 : this.#leaseMs);
    if (build.queued !== true) this.#own.add(entry.id);
    return entry.id;
  }

  async adopt(id: string): Promise<boolean> {
    if (!(await adoptEntry(this.#deps.connection, id, this.#deps.replica, this.#leaseMs))) return false;
    this.#own.add(id);
    return true;
  }

  update(id: string, patch: BuildUpdate): Promise<void> {
    return updateEntry(this.#deps.connection, id, { ...patch }, 0);
  }

  addWaiters(id: string, delta: number): Promise<void> {
    return updateEntry(this.#deps.connection, id, {}, delta);
  }

  async finish(id: string, outcome: BuildOutcome): Promise<void> {
    this.#own.delete(id);
    await finishEntry(this.#deps.connection, id, outcome, this.#ending());
  }

  async list(filter: BuildFilter = {}): Promise<BuildRecord[]> {
    const { entries, lostIds } = await listEntries(this.#deps.connection, this.#ending());
    const at = this.#now();
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
    const watch = channelWatch(this.#hub, buildEndChannel(id));
    // A replica that died publishes nothing: its lease is read again once it may have expired.
    return finishedWithin((i) => this.get(i), id, ms, signal, watch, this.#leaseMs);
  }

  requestCancel(id: string, by: string): Promise<void> {
    return requestCancel(this.#deps.connection, id, by);
  }

  onCancel(listener: (id: string, by: string) => void): void {
    const listening = {
      hub: this.#hub,
      own: () => this.#own.ids(),
      read: (id: string) => this.#readEntry(id),
      signal: this.#stop.signal,
    };
    listenForCancels(listening, listener).catch((err: unknown) => {
      this.#deps.logger.warn({ problem: reasonOf(err) }, 'could not listen for build cancellations');
    });
  }

  reserveKey(key: string, digest: string): Promise<KeyReservation> {
    const isKept = async (buildId: string) => (await this.get(buildId)) !== undefined;
    return reserveKey(this.#deps.connection, key, digest, isKept);
  }

  bindKey(key: string, buildId: string): Promise<void> {
    return bindKey(this.#deps.connection, key, buildId);
  }

  releaseKey(key: string): Promise<void> {
    return releaseKey(this.#deps.connection, key);
  }

  close(): void {
    this.#own.close();
    this.#stop.abort();
    void this.#hub.close();
  }
}

export function createRedisBuildRegistry(deps: RedisRegistryDeps): RedisBuildRegistry {
  return new RedisRegistry(deps);
}
