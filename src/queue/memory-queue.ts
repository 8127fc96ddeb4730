/**
 * The queue of embedded mode: the same structure as Redis mode's in this process (per level a ring
 * of tenants in turn order, a line per tenant in arrival order, counters), persisted nowhere (a
 * restart ends the builds that waited as failures, docs/queue.md). Every build here is held by
 * this process: its request lives nowhere else.
 */
import { QUEUE_CLASSES, type QueueClass } from '../rules/build-classes.js';
import { LEVELS, levelOf, type QueueEntry } from './fair-order.js';
import type { PlaceInput, QueueDepths, QueueStore } from './types.js';

const TAKES_KEPT = 50;

interface Level {
  /** Tenants with builds waiting, in turn order (Map keeps insertion order). */
  readonly ring: Map<string, true>;
  /** Each tenant's waiting builds, in arrival order. */
  readonly lines: Map<string, Map<string, QueueEntry>>;
}

export function createMemoryQueue(): QueueStore {
  const levels: Level[] = Array.from({ length: LEVELS }, () => ({ ring: new Map(), lines: new Map() }));
  const waiting = new Map<string, QueueEntry>();
  const depths = Object.fromEntries(QUEUE_CLASSES.map((c) => [c, 0])) as Record<QueueClass, number>;
  const tenantWaiting = new Map<string, number>();
  /** Running build id -> tenant, and each tenant's count. */
  const running = new Map<string, string>();
  const tenantRunning = new Map<string, number>();
  const quotas = new Map<string, number>();
  let takes: number[] = [];
  const bump = (counts: Map<string, number>, key: string, by: number): void => {
    const next = (counts.get(key) ?? 0) + by;
    if (next <= 0) counts.delete(key);
    else counts.set(key, next);
  };
  const snapshot = (): QueueDepths => ({ ...depths });

  const unlink = (entry: QueueEntry): void => {
    const level = levels[levelOf(entry)] as Level;
    const line = level.lines.get(entry.tenant);
    line?.delete(entry.id);
    if (line?.size === 0) {
      level.lines.delete(entry.tenant);
      level.ring.delete(entry.tenant);
    }
    waiting.delete(entry.id);
    depths[entry.class] -= 1;
    bump(tenantWaiting, entry.tenant, -1);
  };
  const run = (id: string, tenant: string): void => {
    if (running.has(id)) return;
    running.set(id, tenant);
    bump(tenantRunning, tenant, 1);
  };
  const underQuota = (tenant: string): boolean => {
    const max = quotas.get(tenant);
    return max === undefined || (tenantRunning.get(tenant) ?? 0) < max;
  };
  const nextOf = (replica: string): QueueEntry | undefined => {
    for (const level of levels) {
      for (const tenant of level.ring.keys()) {
        if (!underQuota(tenant)) continue;
        for (const entry of level.lines.get(tenant)?.values() ?? []) {
          if (entry.request !== undefined || entry.owner === replica) return entry;
        }
      }
    }
    return undefined;
  };

  return {
    admission: async (tenant) => ({
      depths: snapshot(),
      tenantWaiting: tenantWaiting.get(tenant) ?? 0,
      tenantRunning: tenantRunning.get(tenant) ?? 0,
    }),
    async enqueue(entry) {
      const level = levels[levelOf(entry)] as Level;
      const line = level.lines.get(entry.tenant) ?? new Map<string, QueueEntry>();
      level.lines.set(entry.tenant, line.set(entry.id, entry));
      if (!level.ring.has(entry.tenant)) level.ring.set(entry.tenant, true);
      waiting.set(entry.id, entry);
      depths[entry.class] += 1;
      bump(tenantWaiting, entry.tenant, 1);
      if (entry.maxRunning === undefined) quotas.delete(entry.tenant);
      else quotas.set(entry.tenant, entry.maxRunning);
      return snapshot();
    },
    async take(replica, nowMs) {
      const entry = nextOf(replica);
      if (entry === undefined) return { depths: snapshot() };
      unlink(entry);
      const { ring } = levels[levelOf(entry)] as Level;
      // Served now: behind every other tenant of its level.
      if (ring.delete(entry.tenant)) ring.set(entry.tenant, true);
      run(entry.id, entry.tenant);
      takes = [...takes.slice(-(TAKES_KEPT - 1)), nowMs];
      return { entry, depths: snapshot() };
    },
    async remove(id) {
      const entry = waiting.get(id);
      if (entry === undefined) return undefined;
      unlink(entry);
      return snapshot();
    },
    started: async (id, tenant) => run(id, tenant),
    async ended(id) {
      const tenant = running.get(id);
      if (tenant === undefined) return;
      running.delete(id);
      bump(tenantRunning, tenant, -1);
    },
    async places(ids) {
      const builds: PlaceInput[] = [];
      for (const id of ids) {
        const entry = waiting.get(id);
        if (entry === undefined) continue;
        const level = levelOf(entry);
        const line = [...(levels[level]?.lines.get(entry.tenant)?.keys() ?? [])];
        builds.push({ id, level, tenant: entry.tenant, inLine: line.indexOf(id) });
      }
      return {
        builds,
        levels: levels.map((level) => {
          const ring = [...level.ring.keys()].map((tenant) => ({
            tenant,
            count: level.lines.get(tenant)?.size ?? 0,
          }));
          return { waiting: ring.reduce((sum, t) => sum + t.count, 0), ring };
        }),
      };
    },
    takeTimes: async () => takes,
    async dropHeld(owner) {
      const mine = [...waiting.values()].filter((entry) => entry.owner === owner);
      for (const entry of mine) unlink(entry);
      return mine;
    },
    reap: async () => [],
    onChange: () => undefined,
    heartbeat: async () => undefined,
    close: () => undefined,
  };
}
