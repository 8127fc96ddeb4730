/**
 * The shared build queue's store (docs/queue.md): each operation one atomic step whose cost does
 * not grow with the builds waiting, in memory (embedded mode) or in Redis (one queue for every
 * replica, one Lua script per change). The order's rules are fair-order.ts's.
 */
import type { QueueClass } from '../rules/build-classes.js';
import type { QueueEntry, RingLevel } from './fair-order.js';

/** Builds waiting per class (the depth metric, and the bounds of the two kinds). */
export type QueueDepths = Readonly<Record<QueueClass, number>>;

/** What admitting a build of a tenant needs to know, read in one step. */
export interface Admission {
  readonly depths: QueueDepths;
  /** The tenant's builds waiting (every class) and running under the queue's quotas. */
  readonly tenantWaiting: number;
  readonly tenantRunning: number;
}

/** What positions are computed from (fair-order.ts `placeOf`): a waiting build and its level's ring. */
export interface PlaceInput {
  readonly id: string;
  readonly level: number;
  readonly tenant: string;
  /** Builds of the same tenant and level ahead of it. */
  readonly inLine: number;
}
export interface PlaceData {
  readonly builds: readonly PlaceInput[];
  /** Per level: the builds waiting, and the ring of tenants in turn order with their counts. */
  readonly levels: readonly RingLevel[];
}

export interface QueueStore {
  admission(tenant: string): Promise<Admission>;
  /** Puts `entry` at the end of its tenant's line; wakes the replicas. */
  enqueue(entry: QueueEntry): Promise<QueueDepths>;
  /**
   * Takes the next build `replica` may run (any replica's portable build, or one it holds), in
   * the queue's order and within its tenant's quota; it counts as running until `ended`.
   */
  take(replica: string, nowMs: number): Promise<{ entry?: QueueEntry; depths: QueueDepths }>;
  /** Takes the waiting build `id` out; undefined when it no longer waits. */
  remove(id: string): Promise<QueueDepths | undefined>;
  /** A build started at once counts toward its tenant's running quota. */
  started(id: string, tenant: string, nowMs: number): Promise<void>;
  /** A running build ended: its tenant's quota frees (the replicas are woken when others wait). */
  ended(id: string): Promise<void>;
  /** What the places of the waiting builds `ids` are computed from (absent: not waiting). */
  places(ids: readonly string[]): Promise<PlaceData>;
  /** When the last builds left the queue (ms, any order), to estimate how fast it drains. */
  takeTimes(): Promise<number[]>;
  /** Takes out every build only `owner` could run (its own credentials); answers them. */
  dropHeld(owner: string): Promise<QueueEntry[]>;
  /**
   * Redis mode: the builds held by replicas whose heartbeat expired, taken out, and the running
   * builds whose lease expired (older than `graceMs`) no longer counted. Embedded: nothing.
   */
  reap(nowMs: number, graceMs: number): Promise<QueueEntry[]>;
  /** Redis mode: wakes `listener` whenever work arrives or a quota frees (and on reconnection). */
  onChange(listener: () => void): void;
  /** This replica says it is alive (its held builds are kept while it is). */
  heartbeat(): Promise<void>;
  close(): void;
}
