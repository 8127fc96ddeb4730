/**
 * The queue of embedded mode: the same structure as Redis mode's in this process (per level a ring
 * of tenants in turn order, a line per tenant in arrival order, counters), persisted nowhere (a
 * restart ends the builds that waited as failures, docs/queue.md). Every build here is held by
 * this process: its request lives nowhere else.
 */
import { QUEUE_CLASSES, type QueueClass } from '../rules/build-classes.js';
import { LEVELS, levelOf, type QueueEntry, type RingLevel } from './fair-order.js';
import type { Admission, PlaceData, PlaceInput, QueueDepths, QueueStore, Reaped } from './types.js';

const TAKES_KEPT = 50;

interface Level {
  /** Tenants with builds waiting, in turn order (a Map keeps insertion order). */
  readonly ring: Map<string, true>;
  /** Each tenant's waiting builds, in arrival order. */
  readonly lines: Map<string, Map<string, QueueEntry>>;
}

const bump = (counts: Map<string, number>, key: string, by: number): void => {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
};

class MemoryQueue implements QueueStore {
  readonly #levels: Level[] = Array.from({ length: LEVELS }, () => ({ ring: new Map(), lines: new Map() }));
  readonly #waiting = new Map<string, QueueEntry>();
  readonly #depths = Object.fromEntries(QUEUE_CLASSES.map((c) => [c, 0])) as Record<QueueClass, number>;
  readonly #tenantWaiting = new Map<string, number>();
  /** Running build id -> tenant, and each tenant's count. */
  readonly #running = new Map<string, string>();
  readonly #tenantRunning = new Map<string, number>();
  readonly #quotas = new Map<string, number>();
  #takes: number[] = [];

  async admission(tenant: string): Promise<Admission> {
    return {
      depths: this.#snapshot(),
      tenantWaiting: this.#tenantWaiting.get(tenant) ?? 0,
      tenantRunning: this.#tenantRunning.get(tenant) ?? 0,
    };
  }

  async enqueue(entry: QueueEntry): Promise<QueueDepths> {
    const level = this.#levelOf(entry);
    const line = level.lines.get(entry.tenant) ?? new Map<string, QueueEntry>();
    level.lines.set(entry.tenant, line.set(entry.id, entry));
    if (!level.ring.has(entry.tenant)) level.ring.set(entry.tenant, true);
    this.#waiting.set(entry.id, entry);
    this.#depths[entry.class] += 1;
    bump(this.#tenantWaiting, entry.tenant, 1);
    if (entry.maxRunning === undefined) this.#quotas.delete(entry.tenant);
    else this.#quotas.set(entry.tenant, entry.maxRunning);
    return this.#snapshot();
  }

  /** One process: a build that ran here no longer runs, and waits again. */
  async requeue(entry: QueueEntry): Promise<QueueDepths> {
    await this.ended(entry.id);
    return this.#waiting.has(entry.id) ? this.#snapshot() : this.enqueue(entry);
  }

  async take(replica: string, nowMs: number): Promise<{ entry?: QueueEntry; depths: QueueDepths }> {
    const entry = this.#nextOf(replica);
    if (entry === undefined) return { depths: this.#snapshot() };
    this.#unlink(entry);
    const { ring } = this.#levelOf(entry);
    // Served now: behind every other tenant of its level.
    if (ring.delete(entry.tenant)) ring.set(entry.tenant, true);
    await this.started(entry.id, entry.tenant);
    this.#takes = [...this.#takes.slice(-(TAKES_KEPT - 1)), nowMs];
    return { entry, depths: this.#snapshot() };
  }

  async remove(id: string): Promise<QueueDepths | undefined> {
    const entry = this.#waiting.get(id);
    if (entry === undefined) return undefined;
    this.#unlink(entry);
    return this.#snapshot();
  }

  async started(id: string, tenant: string): Promise<void> {
    if (this.#running.has(id)) return;
    this.#running.set(id, tenant);
    bump(this.#tenantRunning, tenant, 1);
  }

  async ended(id: string): Promise<void> {
    const tenant = this.#running.get(id);
    if (tenant === undefined) return;
    this.#running.delete(id);
    bump(this.#tenantRunning, tenant, -1);
  }

  /** O(tenants + the waiting builds of the tenants asked about). */
  async places(ids: readonly string[]): Promise<PlaceData> {
    const builds: PlaceInput[] = [];
    for (const id of ids) {
      const entry = this.#waiting.get(id);
      if (entry === undefined) continue;
      const line = [...(this.#levelOf(entry).lines.get(entry.tenant)?.keys() ?? [])];
      builds.push({ id, level: levelOf(entry), tenant: entry.tenant, inLine: line.indexOf(id) });
    }
    const levels = this.#levels.map((level): RingLevel => {
      const ring = [...level.ring.keys()].map((tenant) => ({
        tenant,
        count: level.lines.get(tenant)?.size ?? 0,
      }));
      return { waiting: ring.reduce((sum, t) => sum + t.count, 0), ring };
    });
    return { builds, levels };
  }

  async takeTimes(): Promise<number[]> {
    return this.#takes;
  }

  async dropHeld(owner: string): Promise<QueueEntry[]> {
    const mine = [...this.#waiting.values()].filter((entry) => entry.owner === owner);
    for (const entry of mine) this.#unlink(entry);
    return mine;
  }

  async reap(): Promise<Reaped> {
    return { dropped: [], lost: [] };
  }

  async again(): Promise<string[]> {
    return [];
  }

  onChange(): void {}

  async heartbeat(): Promise<void> {}

  close(): void {}

  #levelOf(entry: QueueEntry): Level {
    return this.#levels[levelOf(entry)] as Level;
  }

  #snapshot(): QueueDepths {
    return { ...this.#depths };
  }

  #unlink(entry: QueueEntry): void {
    const level = this.#levelOf(entry);
    const line = level.lines.get(entry.tenant);
    line?.delete(entry.id);
    if (line?.size === 0) {
      level.lines.delete(entry.tenant);
      level.ring.delete(entry.tenant);
    }
    this.#waiting.delete(entry.id);
    this.#depths[entry.class] -= 1;
    bump(this.#tenantWaiting, entry.tenant, -1);
  }

  #underQuota(tenant: string): boolean {
    const max = this.#quotas.get(tenant);
    return max === undefined || (this.#tenantRunning.get(tenant) ?? 0) < max;
  }

  /** The next build `replica` may run: O(1) unless tenants are passed over (O(tenants)). */
  #nextOf(replica: string): QueueEntry | undefined {
    for (const level of this.#levels) {
      for (const tenant of level.ring.keys()) {
        if (!this.#underQuota(tenant)) continue;
        for (const entry of level.lines.get(tenant)?.values() ?? []) {
          if (entry.request !== undefined || entry.owner === replica) return entry;
        }
      }
    }
    return undefined;
  }
}

export function createMemoryQueue(): QueueStore {
  return new MemoryQueue();
}
