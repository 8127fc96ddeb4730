/**
 * The order of the shared build queue (docs/queue.md), pure: by class first (a request, then a
 * push, then reconcile and refresh), round-robin across tenants within a class (the tenant served
 * longest ago first), first come first served within a tenant. The state is plain JSON: the same
 * in memory (embedded mode) and in Redis (one document for every replica).
 */
import type { QueueClass } from '../rules/build-classes.js';
import type { RequestedBy } from '../rules/caller.js';

export { QUEUE_CLASSES, type QueueClass } from '../rules/build-classes.js';
/** Reconcile and refresh share the last level: both rebuild what is already there. */
const LEVEL: Readonly<Record<QueueClass, number>> = { api: 0, push: 1, reconcile: 2, refresh: 2 };
const LEVELS = 3;

/** What a replica needs to run a queued build it did not accept. */
export interface QueueEntry {
  /** The build's record id. */
  readonly id: string;
  readonly class: QueueClass;
  readonly tenant: string;
  readonly enqueuedAtMs: number;
  /** The replica that accepted it (it holds the plan when the request carried credentials). */
  readonly owner: string;
  /** The request as planned again by any replica; absent: only the owner can run it. */
  readonly request?: Readonly<Record<string, unknown>>;
  readonly requestId: string;
  readonly requestedBy?: RequestedBy;
  /** The tenant's quota of running builds (undefined: none). */
  readonly maxRunning?: number;
}

/** A build running under the queue's quotas (started from the queue or at once). */
export interface RunningEntry {
  readonly id: string;
  readonly tenant: string;
  /** When it started (ms): a record's lease is not there yet in its first moments. */
  readonly sinceMs?: number;
}

export interface QueueState {
  /** Waiting builds, in arrival order. */
  readonly waiting: readonly QueueEntry[];
  /** Per level, the tenants by when they were last served (longest ago first). */
  readonly rings: readonly (readonly string[])[];
  readonly running: readonly RunningEntry[];
  /** When the last takes happened (ms), to estimate how fast the queue drains. */
  readonly takes: readonly number[];
}

export const EMPTY_QUEUE: QueueState = { waiting: [], rings: [[], [], []], running: [], takes: [] };
const TAKES_KEPT = 50;

export const levelOf = (entry: Pick<QueueEntry, 'class'>): number => LEVEL[entry.class];

export const runningOf = (state: QueueState, tenant: string): number =>
  state.running.filter((r) => r.tenant === tenant).length;

export const waitingOf = (state: QueueState, tenant: string): number =>
  state.waiting.filter((w) => w.tenant === tenant).length;

/** The state with `entry` waiting at the end of its tenant's line. */
export function withEntry(state: QueueState, entry: QueueEntry): QueueState {
  const level = levelOf(entry);
  const rings = state.rings.map((ring, i) =>
    i === level && !ring.includes(entry.tenant) ? [...ring, entry.tenant] : ring,
  );
  return { ...state, waiting: [...state.waiting, entry], rings };
}

/** The next entry `canTake` allows, by the queue's order; undefined when none. */
export function pickNext(state: QueueState, canTake: (entry: QueueEntry) => boolean): QueueEntry | undefined {
  for (let level = 0; level < LEVELS; level += 1) {
    for (const tenant of state.rings[level] ?? []) {
      const quota = (entry: QueueEntry): boolean =>
        entry.maxRunning === undefined || runningOf(state, tenant) < entry.maxRunning;
      const found = state.waiting.find(
        (entry) => levelOf(entry) === level && entry.tenant === tenant && quota(entry) && canTake(entry),
      );
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The state once `entry` left the queue to run: its tenant served last in its class. */
export function withTaken(state: QueueState, entry: QueueEntry, nowMs: number): QueueState {
  const level = levelOf(entry);
  const waiting = state.waiting.filter((w) => w.id !== entry.id);
  const served = state.rings.map((ring, i) =>
    i === level ? [...ring.filter((t) => t !== entry.tenant), entry.tenant] : ring,
  );
  return {
    waiting,
    rings: pruned(served, waiting),
    running: [...state.running, { id: entry.id, tenant: entry.tenant, sinceMs: nowMs }],
    takes: [...state.takes, nowMs].slice(-TAKES_KEPT),
  };
}

/** The rings without tenants that have nothing waiting at their level. */
const pruned = (rings: readonly (readonly string[])[], waiting: readonly QueueEntry[]): string[][] =>
  rings.map((ring, level) =>
    ring.filter((tenant) => waiting.some((w) => w.tenant === tenant && levelOf(w) === level)),
  );

/** The state without the waiting entry `id` (cancelled, or dropped). */
export function withoutWaiting(state: QueueState, id: string): QueueState {
  const waiting = state.waiting.filter((w) => w.id !== id);
  return { ...state, waiting, rings: pruned(state.rings, waiting) };
}

/** The state with `id` running, or no longer running. */
export const withRunning = (state: QueueState, running: RunningEntry): QueueState => ({
  ...state,
  running: [...state.running.filter((r) => r.id !== running.id), running],
});
export const withoutRunning = (state: QueueState, id: string): QueueState => ({
  ...state,
  running: state.running.filter((r) => r.id !== id),
});

/** Every waiting entry in the order the queue would start them, were every slot free. */
export function takeOrder(state: QueueState): QueueEntry[] {
  const order: QueueEntry[] = [];
  let rest: QueueState = { ...state, running: [] };
  for (;;) {
    const next = pickNext(rest, () => true);
    if (next === undefined) return order;
    order.push(next);
    rest = withTaken(rest, next, 0);
  }
}

/** Each waiting build's place: `position` 1 is the next to start, `ahead` builds start before it. */
export function positions(state: QueueState): Map<string, { position: number; ahead: number }> {
  return new Map(takeOrder(state).map((entry, i) => [entry.id, { position: i + 1, ahead: i }]));
}

/** Seconds until `waiting` builds have left at the measured drain rate (a default without data). */
export function drainSeconds(state: QueueState, waiting: number, fallback: number): number {
  const { takes } = state;
  const first = takes[0];
  const last = takes.at(-1);
  if (takes.length < 2 || first === undefined || last === undefined || last <= first) return fallback;
  const perSecond = (takes.length - 1) / ((last - first) / 1000);
  return Math.min(3600, Math.max(1, Math.ceil(waiting / perSecond)));
}
