/**
 * Async builds and prebuilds that wait for a slot (docs/queue.md): queued with their record
 * (phase `queued`) in the shared queue, taken by whichever replica frees a slot first in the
 * queue's fair order, and ended as failures when they can never start. The plans this replica
 * accepted stay here: the only copy of a request's own credentials.
 */
import { serviceError } from '../../src/errors/errors.js';
import type { BuildRegistry, NewBuild } from '../../src/builds/types.js';
import type { Config } from '../../src/config/types.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';
import {
  placeOf,
  QUEUE_CLASSES,
  type Place,
  type QueueClass,
  type QueueEntry,
} from '../../src/queue/fair-order.js';
import type { Admission, LostRun, QueueDepths, QueueStore } from '../../src/queue/types.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { Pump } from './pump.js';
import type { Reservation } from './slots.js';
import { busyRefusal, fullRefusal } from './refusals.js';
import { quotaOf } from '../../src/rules/tenants.js';
import { startUpkeep } from './upkeep.js';

/** A build the queue holds for this replica: its plan and how it was asked for. */
export interface HeldBuild {
  readonly plan: BuildPlan;
  readonly options: { readonly requestId: string; readonly logger: Logger };
}

/** A build taken from the queue to run here, its slot reserved. */
export interface TakenBuild {
  readonly entry: QueueEntry;
  /** The plan this replica held, when it accepted the build. */
  readonly held?: HeldBuild;
  readonly slot: Reservation;
}

export interface WaitingDeps {
  readonly config: Pick<Config, 'build'>;
  readonly store: QueueStore;
  /** Whether the store is shared by replicas (Redis mode). */
  readonly shared: boolean;
  readonly replica: string;
  readonly registry: Pick<BuildRegistry, 'start' | 'queueAgain'>;
  readonly slots: { reserve(): Reservation | undefined; onFree(listener: () => void): void };
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'queueDepth' | 'queueWait'>;
  /** Counts a refusal as the answer stage does (workers/flow/answer.ts). */
  readonly counted: (err: Error) => void;
  /** Runs a taken build (its record adopted by the caller). */
  readonly run: (taken: TakenBuild) => void;
  /** Ends the record of a build that never started, with `err` as its answer. */
  readonly endUnstarted: (id: string, err: Error) => Promise<void>;
  readonly now?: () => number;
}

export class WaitingBuilds {
  readonly #deps: WaitingDeps;
  readonly #held = new Map<string, HeldBuild>();
  readonly #now: () => number;
  readonly #pump: Pump;
  readonly #stopUpkeep: () => void;

  constructor(deps: WaitingDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#pump = new Pump(
      () => this.#takeOne(),
      (err) => deps.logger.warn({ err }, 'the build queue could not be read'),
    );
    deps.slots.onFree(() => this.pump());
    deps.store.onChange(() => this.pump());
    this.#stopUpkeep = startUpkeep({
      store: deps.store,
      shared: deps.shared,
      kick: () => this.pump(),
      reaped: (entries) =>
        this.#endAll(
          entries,
          (e) => `its replica ${e.owner} stopped, and the credentials of its request were only there`,
        ),
      lost: (runs) => this.#runAgain(runs),
      logger: deps.logger,
      now: this.#now,
    });
  }

  /**
   * Whether a build of `tenant` must wait rather than start now: builds wait already (they go
   * first), or its tenant runs its quota. One read of the queue's counters, answered when the build
   * must wait (`enqueue` decides on the same read); undefined when it may start now.
   */
  async mustWait(tenant: string): Promise<Admission | undefined> {
    const admission = await this.#deps.store.admission(tenant);
    const quota = quotaOf(this.#deps.config.build.quotas, tenant);
    const wait =
      Object.values(admission.depths).some((n) => n > 0) ||
      (quota?.maxRunning !== undefined && admission.tenantRunning >= quota.maxRunning);
    return wait ? admission : undefined;
  }

  /**
   * Counts a build that started at once toward its tenant's running quota; `again`: its entry,
   * kept while it runs (Redis mode) so that another replica runs it again should this one die.
   * Nothing when there are no quotas and nothing to keep. O(1).
   */
  async started(
    id: string,
    tenant: string,
    again?: Omit<QueueEntry, 'enqueuedAtMs' | 'owner'>,
  ): Promise<void> {
    const keep = this.#deps.shared && again !== undefined;
    if (this.#deps.config.build.quotas.length === 0 && !keep) return;
    const entry = keep ? { ...again, enqueuedAtMs: this.#now(), owner: this.#deps.replica } : undefined;
    await this.#deps.store.started(id, tenant, this.#now(), entry);
  }

  /** A build that ran has ended: its slot in its tenant's quota frees, and the next may start. */
  async ended(id: string): Promise<void> {
    await this.#deps.store.ended(id);
    this.pump();
  }

  /** The 429 of a synchronous build of a tenant at its running quota, if it is. */
  async refuseSync(tenant: string): Promise<void> {
    const quota = quotaOf(this.#deps.config.build.quotas, tenant);
    if (quota?.maxRunning === undefined) return;
    const { tenantRunning } = await this.#deps.store.admission(tenant);
    if (tenantRunning < quota.maxRunning) return;
    throw this.#counted(busyRefusal(tenant, tenantRunning, await this.#deps.store.takeTimes()));
  }

  /**
   * Queues `build` (recorded with phase `queued`); throws the 429 of a full queue or tenant, decided
   * on `admission` when the caller just read it (mustWait), else on a read of its own.
   */
  async enqueue(
    build: NewBuild,
    held: HeldBuild,
    queued: { readonly class: QueueClass; readonly tenant: string },
    admission?: Admission,
  ): Promise<string> {
    const { store, config } = this.#deps;
    const quota = quotaOf(config.build.quotas, queued.tenant);
    const refusal = await fullRefusal(
      admission ?? (await store.admission(queued.tenant)),
      { ...queued, quota },
      config.build,
      () => store.takeTimes(),
    );
    if (refusal !== undefined) throw this.#counted(refusal);
    const id = await this.#deps.registry.start({ ...build, tenant: queued.tenant, queued: true });
    const entry: QueueEntry = {
      id,
      class: queued.class,
      tenant: queued.tenant,
      enqueuedAtMs: this.#now(),
      owner: this.#deps.replica,
      ...(held.plan.request === undefined ? {} : { request: { ...held.plan.request } }),
      requestId: build.requestId,
      ...(build.requestedBy === undefined ? {} : { requestedBy: build.requestedBy }),
      ...(quota?.maxRunning === undefined ? {} : { maxRunning: quota.maxRunning }),
    };
    this.#held.set(id, held);
    this.#report(await store.enqueue(entry));
    held.options.logger.info({ buildId: id, tenant: entry.tenant, class: entry.class }, 'build queued');
    this.pump();
    return id;
  }

  /**
   * Puts a build that ran here back in the queue as `entry` (its request any replica plans again),
   * for another replica to take: this one stops. O(log n).
   */
  async requeue(entry: Omit<QueueEntry, 'enqueuedAtMs' | 'owner' | 'maxRunning'>): Promise<void> {
    const quota = quotaOf(this.#deps.config.build.quotas, entry.tenant);
    const full: QueueEntry = {
      ...entry,
      enqueuedAtMs: this.#now(),
      owner: this.#deps.replica,
      ...(quota?.maxRunning === undefined ? {} : { maxRunning: quota.maxRunning }),
    };
    this.#report(await this.#deps.store.requeue(full));
    this.#deps.logger.info(
      { buildId: entry.id, tenant: entry.tenant, class: entry.class },
      'build handed back to the queue',
    );
  }

  /** Takes the queued build `id` out (DELETE); false when it is no longer queued. */
  async remove(id: string): Promise<boolean> {
    const depths = await this.#deps.store.remove(id);
    this.#held.delete(id);
    if (depths === undefined) return false;
    this.#report(depths);
    return true;
  }

  /** The places of the queued builds `ids` (those no longer waiting have none). O(tenants + ids). */
  async positions(ids: readonly string[]): Promise<Map<string, Place>> {
    const { builds, levels } = await this.#deps.store.places(ids);
    return new Map(builds.map((build) => [build.id, placeOf(levels, build)]));
  }

  /**
   * Stops taking builds; the builds this replica holds that no other replica can run (all of them
   * in embedded mode) end as failures now, never silently.
   */
  async stop(): Promise<void> {
    this.halt();
    let mine: QueueEntry[];
    try {
      mine = await this.#deps.store.dropHeld(this.#deps.replica);
    } catch (err) {
      // The shared queue is unreachable: what waits there stays, for the replicas' reap.
      this.#deps.logger.warn({ err }, 'the build queue could not be read at stop');
      return;
    }
    const reason = this.#deps.shared
      ? 'its replica stopped, and the credentials of its request were only there'
      : 'the service stopped before a slot was free (queued builds are kept in memory only)';
    await this.#endAll(mine, () => reason);
  }

  /** Takes no more builds (the process stops now): what waits stays in the queue. */
  halt(): void {
    this.#pump.stop();
    this.#stopUpkeep();
  }

  /** Starts queued builds while this replica has free slots. */
  pump(): void {
    this.#pump.kick();
  }

  /** Takes one build into a free slot of this replica; false when no slot or no build. */
  async #takeOne(): Promise<boolean> {
    const slot = this.#deps.slots.reserve();
    if (slot === undefined) return false;
    let taken: QueueEntry | undefined;
    try {
      const next = await this.#deps.store.take(this.#deps.replica, this.#now());
      this.#report(next.depths);
      taken = next.entry;
    } finally {
      if (taken === undefined) slot.release();
    }
    if (taken === undefined) return false;
    const held = this.#held.get(taken.id);
    this.#held.delete(taken.id);
    const waitedMs = this.#now() - taken.enqueuedAtMs;
    this.#deps.metrics.queueWait.observe({ class: taken.class }, waitedMs / 1000);
    this.#deps.logger.info(
      { buildId: taken.id, tenant: taken.tenant, class: taken.class, owner: taken.owner, waitedMs },
      'build taken from the queue',
    );
    this.#deps.run({ entry: taken, slot, ...(held === undefined ? {} : { held }) });
    return true;
  }

  async #endAll(entries: readonly QueueEntry[], reason: (entry: QueueEntry) => string): Promise<void> {
    await Promise.all(
      entries.map(async (entry) => {
        this.#held.delete(entry.id);
        await this.#deps
          .endUnstarted(entry.id, serviceError('BUILD_NOT_STARTED', { reason: reason(entry) }))
          .catch((err: unknown) =>
            this.#deps.logger.warn({ err, buildId: entry.id }, 'could not end a queued build'),
          );
      }),
    );
  }

  /**
   * The running builds two reaps found lost with their replica (it died without grace): each
   * record waits again, then the queue puts its entry back (record first: a reap stopped between
   * finds it still running there); a record no longer that replica's only stops counting there.
   * Two scripts per build, O(log n) each.
   */
  async #runAgain(runs: readonly LostRun[]): Promise<void> {
    const { registry, store, logger } = this.#deps;
    await Promise.all(
      runs.map(async ({ id, replica }) => {
        const waits = (await registry.queueAgain?.(id, replica)) ?? false;
        if (!waits) return store.ended(id, replica);
        if ((await store.again(replica, [id])).length === 0) return;
        logger.info({ buildId: id, replica }, 'build queued again: its replica stopped');
      }),
    );
    this.pump();
  }

  /** `err`, a refusal, counted by the answer stage. */
  #counted(err: Error): Error {
    this.#deps.counted(err);
    return err;
  }

  #report(depths: QueueDepths): void {
    for (const queueClass of QUEUE_CLASSES) {
      this.#deps.metrics.queueDepth.set({ class: queueClass }, depths[queueClass]);
    }
  }
}
