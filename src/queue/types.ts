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

/** A running build whose replica stopped beating (Redis mode): any replica may run it again. */
export interface LostRun {
  readonly id: string;
  /** The replica it ran on. */
  readonly replica: string;
  /** Whether that replica still beats (then it no longer runs the build only if that lasts). */
  readonly beating?: boolean;
}

/** What a reap found: builds only stopped replicas could run (taken out), builds to run again. */
export interface Reaped {
  readonly dropped: QueueEntry[];
  readonly lost: LostRun[];
}

export interface QueueStore {
  admission(tenant: string): Promise<Admission>;
  /** Puts `entry` at the end of its tenant's line; wakes the replicas. */
  enqueue(entry: QueueEntry): Promise<QueueDepths>;
  /**
   * Puts `entry`, a build this replica ran, back at the end of its tenant's line (it no longer
   * runs here); wakes the replicas. O(log n).
   */
  requeue(entry: QueueEntry): Promise<QueueDepths>;
  /**
   * Takes the next build `replica` may run (any replica's portable build, or one it holds), in
   * the queue's order and within its tenant's quota; it counts as running until `ended`.
   */
  take(replica: string, nowMs: number): Promise<{ entry?: QueueEntry; depths: QueueDepths }>;
  /** Takes the waiting build `id` out; undefined when it no longer waits. */
  remove(id: string): Promise<QueueDepths | undefined>;
  /**
   * A build started at once counts toward its tenant's running quota; `again`: its entry, when any
   * replica may run it again should this one die (Redis mode keeps it while it runs). O(1).
   */
  started(id: string, tenant: string, nowMs: number, again?: QueueEntry): Promise<void>;
  /**
   * A build that ran on `replica` (default this one) ended there: its tenant's quota frees (the
   * replicas are woken when others wait). O(1).
   */
  ended(id: string, replica?: string): Promise<void>;
  /** What the places of the waiting builds `ids` are computed from (absent: not waiting). */
  places(ids: readonly string[]): Promise<PlaceData>;
  /** When the last builds left the queue (ms, any order), to estimate how fast it drains. */
  takeTimes(): Promise<number[]>;
  /** Takes out every build only `owner` could run (its own credentials); answers them. */
  dropHeld(owner: string): Promise<QueueEntry[]>;
  /**
   * Redis mode: the builds held by replicas whose heartbeat expired, taken out (`dropped`); of the
   * running builds older than `graceMs` whose lease expired (on any replica), those any replica
   * may run again (`lost`: AGAIN puts them back, once their records wait again; `beating` when
   * their replica beats: it takes its leases again once Redis answers, so only a lease missing at
   * several reaps in a row means it no longer runs them), the others no longer counted once their
   * replica stopped beating. Embedded: nothing.
   */
  reap(nowMs: number, graceMs: number): Promise<Reaped>;
  /**
   * Redis mode: the builds `ids` that ran on the stopped `replica` wait again, at the end of their
   * tenants' lines; answers those queued again (a repeat: none). O(log n) per build.
   */
  again(replica: string, ids: readonly string[]): Promise<string[]>;
  /** Redis mode: wakes `listener` whenever work arrives or a quota frees (and on reconnection). */
  onChange(listener: () => void): void;
  /** This replica says it is alive (its held builds are kept while it is). */
  heartbeat(): Promise<void>;
  close(): void;
}
