/**
 * The build registry of Redis mode: every replica lists (a page at a time, through indexes),
 * reads, long-polls and cancels the builds of all, and hears of every change (docs/redis.md,
 * What is shared; Keys). It binds this replica to the scripts of its concerns: writes, reads that
 * finish lost builds, evictions, cancels, Idempotency-Keys, and the leases of the builds it runs.
 */
import { reasonOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { buildEndChannel, buildIndexKey, logOwnerKey } from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { createSubscriptionHub, type SubscriptionHub } from '../redis/subscriptions.js';
import { channelWatch, finishedWithin } from './finish-wait.js';
import { fillPage, type Candidate, type Position } from './build-pages.js';
import { filterValues, newBuildEntry, toRecord, type BuildEntry } from './records.js';
import { ChangeFeed } from './redis-build-changes.js';
import { listenForCancels, requestCancel } from './redis-build-cancels.js';
import type { EndingContext } from './redis-build-endings.js';
import { evict } from './redis-build-evictions.js';
import {
  readCandidates,
  readEntry,
  settleAll,
  type EntryRead,
  type LeasedEntry,
  type StoredEntry,
} from './redis-build-reads.js';
import { adoptEntry, finishEntry, startEntry, updateEntry } from './redis-build-writes.js';
import { handBackEntry } from './redis-build-handback.js';
import { queueAgainEntry } from './redis-build-rerun.js';
import { bindKey, releaseKey, reserveKey } from './redis-idempotency-keys.js';
import { OwnBuilds } from './redis-own-builds.js';
import type {
  BuildChange,
  BuildFilter,
  BuildOutcome,
  BuildPage,
  BuildRecord,
  BuildRegistry,
  BuildUpdate,
  KeyReservation,
  NewBuild,
  PageRequest,
} from './types.js';

const DAY_MS = 24 * 3600 * 1000;

export interface RedisRegistryDeps {
  readonly connection: Pick<RedisConnection, 'client' | 'call' | 'subscriber'>;
  readonly history: number;
  /** Days a finished build is kept at most. */
  readonly historyDays: number;
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
  readonly #keptMs: number;
  readonly #changes: ChangeFeed;
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
    this.#history = Math.max(1, Math.floor(deps.history));
    this.#keptMs = deps.historyDays * DAY_MS;
    this.#changes = new ChangeFeed(deps.connection);
    this.#leaseMs = deps.leaseMs ?? LEASE_MS;
    this.#hub = createSubscriptionHub(deps.connection);
    this.#own = new OwnBuilds(deps.connection, deps.replica, this.#leaseMs, deps.logger);
  }

  #ending(): EndingContext {
    const nowMs = this.#now();
    // The record's key outlives the sweep by a day: the sweep still reads what it indexes.
    return {
      nowMs,
      history: this.#history,
      keptSinceMs: nowMs - this.#keptMs,
      recordTtlMs: this.#keptMs + DAY_MS,
      // A live replica renews its leases every third of one: it has done so by then.
      lostAfterMs: this.#leaseMs / 2,
    };
  }

  /** What a read learned: a build it finished as lost is told, the ids leaving the history go. */
  async #settled(read: EntryRead | undefined): Promise<StoredEntry | undefined> {
    if (read?.lostNow === true) {
      this.#tellLost(read.entry);
      await this.#evict(read.leaving);
    }
    return read?.entry;
  }

  async #evict(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await evict(this.#deps.connection, ids).catch((err: unknown) => {
      this.#deps.logger.warn({ problem: reasonOf(err) }, 'could not drop builds that left the history');
    });
  }

  async #readEntry(id: string): Promise<StoredEntry | undefined> {
    const entry = await this.#settled(await readEntry(this.#deps.connection, id, this.#ending()));
    return entry?.finishedAtMs !== undefined && entry.finishedAtMs < this.#ending().keptSinceMs
      ? undefined
      : entry;
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
    return updateEntry(this.#deps.connection, id, { ...patch }, 0, this.#keptMs + 2 * DAY_MS);
  }

  async handBack(id: string, enqueue: () => Promise<void>): Promise<boolean> {
    const handed = await handBackEntry(this.#deps.connection, id, this.#deps.replica, enqueue);
    if (handed) this.#own.delete(id);
    return handed;
  }

  queueAgain(id: string, replica: string): Promise<boolean> {
    return queueAgainEntry(this.#deps.connection, id, replica);
  }

  onTakenOver(listener: (id: string) => void): void {
    this.#own.onTakenOver(listener);
  }

  addWaiters(id: string, delta: number): Promise<void> {
    return updateEntry(this.#deps.connection, id, {}, delta, this.#keptMs + 2 * DAY_MS);
  }

  /**
   * Finishes the record; its lease is kept until the finish lands, so that a store refusing writes
   * a while (maxmemory, a failover) while the caller tries again never gets the build read as lost
   * (let go LEASE_MS after the last failed try: the caller gave up).
   */
  async finish(id: string, outcome: BuildOutcome): Promise<void> {
    let leaving: string[];
    try {
      leaving = await finishEntry(this.#deps.connection, id, outcome, this.#ending());
    } catch (err) {
      this.#own.letGoAfter(id, this.#leaseMs);
      throw err;
    }
    this.#own.delete(id);
    await this.#evict(leaving);
  }

  /** The index a page walks: the smallest of those the filter names (each ZCARD is O(1)). */
  async #indexOf(filter: BuildFilter): Promise<string> {
    const keys = filterValues(filter).map(([field, value]) => buildIndexKey(field, value));
    if (keys.length === 0) return buildIndexKey('all');
    if (keys.length === 1) return keys[0] as string;
    const sizes = await this.#deps.connection.call(async (client) => {
      const pipeline = client.pipeline();
      for (const key of keys) pipeline.zcard(key);
      return ((await pipeline.exec()) ?? []).map(([, size]) => Number(size));
    });
    let best = 0;
    sizes.forEach((size, at) => {
      if (size < (sizes[best] as number)) best = at;
    });
    return keys[best] as string;
  }

  /**
   * A page, through the smallest index the filter names: per read of candidates one range of the
   * index (O(log n + count)), one MGET of their records and leases, and, when old queued records
   * are among them, one read of the queue; no script, nothing that scans the builds kept. The
   * first page of a filter the index answers alone is two round trips and `limit + 1` records
   * parsed; any page examines O(examineBound(limit)) records at most (build-pages.ts).
   */
  async list(filter: BuildFilter, page: PageRequest): Promise<BuildPage> {
    const key = await this.#indexOf(filter);
    const ending = this.#ending();
    const read = async (after: Position | undefined, count: number): Promise<Candidate[]> => {
      const found = await readCandidates(this.#deps.connection, key, after, count);
      const kept = found.filter((c): c is typeof c & LeasedEntry => c.entry !== undefined);
      const reads = await settleAll(this.#deps.connection, kept, ending);
      const settled = new Map<string, StoredEntry | undefined>();
      await Promise.all(
        kept.map(async ({ position }, i) => settled.set(position.id, await this.#settled(reads[i]))),
      );
      return found.map(({ position }) => {
        const entry = settled.get(position.id);
        return entry === undefined ? { position } : { position, entry };
      });
    };
    return fillPage(read, { filter, page, nowMs: ending.nowMs, keptSinceMs: ending.keptSinceMs });
  }

  async ownerOfLog(logId: string): Promise<BuildRecord | undefined> {
    const id = await this.#deps.connection.call((client) => client.get(logOwnerKey(logId)));
    return id === null ? undefined : this.get(id);
  }

  async watchChanges(listener: (change: BuildChange) => void): Promise<() => void> {
    return this.#changes.watch(listener);
  }

  async get(id: string): Promise<BuildRecord | undefined> {
    const entry = await this.#readEntry(id);
    return entry === undefined ? undefined : toRecord(entry, this.#now());
  }

  waitFinished(id: string, ms: number, signal?: AbortSignal): Promise<BuildRecord | undefined> {
    const watch = channelWatch(this.#hub, buildEndChannel(id));
    // A replica that died publishes nothing: its record is read again every half lease (a read
    // ends it as lost half a lease after one found its lease and replica gone).
    return finishedWithin((i) => this.get(i), id, ms, signal, watch, this.#leaseMs / 2);
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

  reserveKey(key: string, digest: string, token: string): Promise<KeyReservation> {
    const isKept = async (buildId: string) => (await this.get(buildId)) !== undefined;
    return reserveKey(this.#deps.connection, key, digest, isKept, token);
  }

  bindKey(key: string, buildId: string): Promise<void> {
    return bindKey(this.#deps.connection, key, buildId);
  }

  releaseKey(key: string, token: string): Promise<void> {
    return releaseKey(this.#deps.connection, key, token);
  }

  close(): void {
    this.#own.close();
    this.#changes.close();
    this.#stop.abort();
    void this.#hub.close();
  }
}

export function createRedisBuildRegistry(deps: RedisRegistryDeps): RedisBuildRegistry {
  return new RedisRegistry(deps);
}
