/**
 * The order of the shared build queue (docs/queue.md), pure: by class first (a request, then a
 * push, then reconcile and refresh), round-robin across tenants within a class (the tenant served
 * longest ago first), first come first served within a tenant. The stores keep it in structures
 * whose cost does not grow with the builds waiting; here are the rules they share: the levels, a
 * waiting build's place from counts, and the drain estimate.
 */
import type { QueueClass } from '../rules/build-classes.js';
import type { RequestedBy } from '../rules/caller.js';

export { QUEUE_CLASSES, type QueueClass } from '../rules/build-classes.js';
/** Reconcile and refresh share the last level: both rebuild what is already there. */
const LEVEL: Readonly<Record<QueueClass, number>> = { api: 0, push: 1, reconcile: 2, refresh: 2 };
export const LEVELS = 3;
/** The classes bounded by `build.maxQueuedPrebuilds` rather than `build.maxQueued`. */
export const isPrebuildClass = (queueClass: QueueClass): boolean => queueClass !== 'api';

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

export const levelOf = (entry: Pick<QueueEntry, 'class'>): number => LEVEL[entry.class];

/** The lane of an entry: `*` when any replica may run it, else its owner's name. */
const ANY_LANE = '*';
export const laneOf = (entry: Pick<QueueEntry, 'request' | 'owner'>): string =>
  entry.request === undefined ? entry.owner : ANY_LANE;

/** A level of the order as positions need it: its builds waiting, its tenants in turn order. */
export interface RingLevel {
  readonly waiting: number;
  readonly ring: readonly { readonly tenant: string; readonly count: number }[];
}

export interface Place {
  readonly position: number;
  readonly ahead: number;
}

/**
 * The place of a build with `inLine` builds of its tenant ahead of it at `level`, were every slot
 * free: every build of the levels before, then round `inLine` of its level's round-robin, where
 * each tenant ahead of it in the ring takes one more turn than those behind. O(tenants).
 */
export function placeOf(
  levels: readonly RingLevel[],
  build: { readonly level: number; readonly tenant: string; readonly inLine: number },
): Place {
  let ahead = build.inLine;
  for (let level = 0; level < build.level; level += 1) ahead += levels[level]?.waiting ?? 0;
  let before = 1;
  for (const { tenant, count } of levels[build.level]?.ring ?? []) {
    if (tenant === build.tenant) before = 0;
    else ahead += Math.min(count, build.inLine + before);
  }
  return { position: ahead + 1, ahead };
}

/** Seconds until `waiting` builds have left, from when the last ones did; a default without data. */
export function drainSeconds(takes: readonly number[], waiting: number, fallback: number): number {
  if (takes.length < 2) return fallback;
  const first = Math.min(...takes);
  const last = Math.max(...takes);
  if (last <= first) return fallback;
  const perSecond = (takes.length - 1) / ((last - first) / 1000);
  return Math.min(3600, Math.max(1, Math.ceil(waiting / perSecond)));
}
