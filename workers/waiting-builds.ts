/**
 * Async builds and prebuilds that wait for a slot (docs/queue.md): queued with their record
 * (phase `queued`) in the shared queue, taken by whichever replica frees a slot first in the
 * queue's fair order, and ended as failures when they can never start. The plans this replica
 * accepted stay here: the only copy of a request's own credentials.
 */
import { serviceError } from '../src/errors/errors.js';
import type { BuildRegistry, NewBuild } from '../src/builds/types.js';
import type { Config, TenantQuota } from '../src/config/types.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import {
  drainSeconds,
  pickNext,
  positions,
  QUEUE_CLASSES,
  runningOf,
  waitingOf,
  withEntry,
  withoutRunning,
  withoutWaiting,
  withRunning,
  withTaken,
  type QueueClass,
  type QueueEntry,
  type QueueState,
} from '../src/queue/fair-order.js';
import type { QueueStore } from '../src/queue/types.js';
import { globToRegExp } from '../src/rules/globs.js';
import { countRefusal } from './answer.js';
import type { BuildPlan } from './plan/plan-types.js';
import type { BuildQueue, Reservation } from './queue.js';

/** Retry-After of a full queue before any build has left it. */
const FULL_RETRY_AFTER_SECONDS = 60;
/** A running entry younger than this is kept whatever its lease says (its record is being written). */
const RUNNING_GRACE_MS = 30_000;
const PUMP_INTERVAL_MS = 1000;

/** A build's tenant: the first segment of its repository's path (`git.example.com/team-a/app` -> `team-a`). */
export const tenantOf = (plan: Pick<BuildPlan, 'url'>): string =>
  plan.url.path
    .split('/')
    .find((segment) => segment !== '')
    ?.replace(/\.git$/, '') ?? plan.url.host;

/** The quota of `tenant`: the first whose glob matches. */
export const quotaOf = (quotas: readonly TenantQuota[], tenant: string): TenantQuota | undefined =>
  quotas.find((quota) => globToRegExp(quota.tenant).test(tenant));

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
  readonly registry: Pick<BuildRegistry, 'start'>;
  readonly slots: Pick<BuildQueue, 'reserve' | 'onFree'>;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'countBuild' | 'queueDepth' | 'queueWait'>;
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
  #pumping = false;
  #again = false;
  #stopped = false;
  readonly #timer: NodeJS.Timeout;

  constructor(deps: WaitingDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    deps.slots.onFree(() => this.pump());
    deps.store.onChange(() => this.pump());
    // A missed message or a replica that died holding builds: looked at again every second.
    this.#timer = setInterval(() => {
      if (deps.shared) void deps.store.heartbeat().catch(() => undefined);
      this.pump();
    }, PUMP_INTERVAL_MS);
    this.#timer.unref();
    if (deps.shared) void deps.store.heartbeat().catch(() => undefined);
  }

  /**
   * Whether a build of `tenant` must wait rather than start now: builds wait already (they go
   * first), or its tenant runs its quota.
   */
  async mustWait(tenant: string): Promise<boolean> {
    const state = await this.#deps.store.read();
    const quota = quotaOf(this.#deps.config.build.quotas, tenant);
    return (
      state.waiting.length > 0 ||
      (quota?.maxRunning !== undefined && runningOf(state, tenant) >= quota.maxRunning)
    );
  }

  /** Counts a build that started at once toward its tenant's running quota (only when quotas exist). */
  async started(id: string, tenant: string): Promise<void> {
    if (this.#deps.config.build.quotas.length === 0) return;
    await this.#deps.store.update((state) => ({
      state: withRunning(state, { id, tenant, sinceMs: this.#now() }),
      value: undefined,
    }));
  }

  /** A build that ran has ended: its slot in its tenant's quota frees, and the next may start. */
  async ended(id: string): Promise<void> {
    const state = await this.#deps.store.read();
    if (!state.running.some((r) => r.id === id)) return;
    await this.#deps.store.update((current) => ({ state: withoutRunning(current, id), value: undefined }));
    await this.#deps.store.changed();
  }

  /** The 429 of a synchronous build of a tenant at its running quota, if it is. */
  async refuseSync(tenant: string): Promise<void> {
    const quota = quotaOf(this.#deps.config.build.quotas, tenant);
    if (quota?.maxRunning === undefined) return;
    const state = await this.#deps.store.read();
    const running = runningOf(state, tenant);
    if (running < quota.maxRunning) return;
    throw this.#counted(
      serviceError(
        'TENANT_BUSY',
        { tenant, running },
        { retryAfterSeconds: drainSeconds(state, 1, FULL_RETRY_AFTER_SECONDS) },
      ),
    );
  }

  /** Queues `build` (recorded with phase `queued`); throws the 429 of a full queue or tenant. */
  async enqueue(
    build: NewBuild,
    held: HeldBuild,
    queued: { readonly class: QueueClass; readonly tenant: string },
  ): Promise<string> {
    const quota = quotaOf(this.#deps.config.build.quotas, queued.tenant);
    this.#refuseFull(await this.#deps.store.read(), queued.tenant, quota);
    const id = await this.#deps.registry.start({ ...build, queued: true });
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
    const state = await this.#deps.store.update((current) => {
      const next = withEntry(current, entry);
      return { state: next, value: next };
    });
    this.#report(state);
    held.options.logger.info({ buildId: id, tenant: entry.tenant, class: entry.class }, 'build queued');
    await this.#deps.store.changed();
    this.pump();
    return id;
  }

  /** Takes the queued build `id` out (DELETE); false when it is no longer queued. */
  async remove(id: string): Promise<boolean> {
    const removed = await this.#deps.store.update((state) => {
      const found = state.waiting.some((w) => w.id === id);
      return {
        state: found ? withoutWaiting(state, id) : state,
        value: found ? withoutWaiting(state, id) : undefined,
      };
    });
    this.#held.delete(id);
    if (removed === undefined) return false;
    this.#report(removed);
    return true;
  }

  /** Each queued build's place in the queue. */
  async positions(): Promise<Map<string, { position: number; ahead: number }>> {
    return positions(await this.#deps.store.read());
  }

  /**
   * Stops taking builds; the builds this replica holds that no other replica can run (all of them
   * in embedded mode) end as failures now, never silently.
   */
  async stop(): Promise<void> {
    this.halt();
    let mine: readonly QueueEntry[];
    try {
      mine = await this.#deps.store.update((state) => {
        const ending = state.waiting.filter(
          (w) => w.owner === this.#deps.replica && (!this.#deps.shared || w.request === undefined),
        );
        const rest = ending.reduce<QueueState>((current, w) => withoutWaiting(current, w.id), state);
        return { state: rest, value: ending };
      });
    } catch (err) {
      // The shared queue is unreachable: what waits there stays, for the replicas' lost-build check.
      this.#deps.logger.warn({ err }, 'the build queue could not be read at stop');
      return;
    }
    const reason = this.#deps.shared
      ? 'its replica stopped, and the credentials of its request were only there'
      : 'the service stopped before a slot was free (queued builds are kept in memory only)';
    await Promise.all(mine.map((w) => this.#endUnstarted(w.id, reason)));
  }

  /** Takes no more builds (the process stops now): what waits stays in the queue. */
  halt(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  /** Starts queued builds while this replica has free slots. */
  pump(): void {
    if (this.#stopped) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    void this.#pumpAll()
      .catch((err: unknown) => this.#deps.logger.warn({ err }, 'the build queue could not be read'))
      .finally(() => {
        this.#pumping = false;
        if (this.#again) {
          this.#again = false;
          this.pump();
        }
      });
  }

  async #pumpAll(): Promise<void> {
    while (!this.#stopped) {
      const slot = this.#deps.slots.reserve();
      if (slot === undefined) return;
      let taken: QueueEntry | undefined;
      try {
        taken = await this.#takeNext();
      } catch (err) {
        slot.release();
        throw err;
      }
      if (taken === undefined) {
        slot.release();
        return;
      }
      const held = this.#held.get(taken.id);
      this.#held.delete(taken.id);
      const waitedMs = this.#now() - taken.enqueuedAtMs;
      this.#deps.metrics.queueWait.observe({ class: taken.class }, waitedMs / 1000);
      this.#deps.logger.info(
        { buildId: taken.id, tenant: taken.tenant, class: taken.class, owner: taken.owner, waitedMs },
        'build taken from the queue',
      );
      this.#deps.run({ entry: taken, slot, ...(held === undefined ? {} : { held }) });
    }
  }

  /** The next build this replica may run, taken from the queue; the builds that can never start, ended. */
  async #takeNext(): Promise<QueueEntry | undefined> {
    const { replica } = this.#deps;
    const now = this.#now();
    const { taken, dropped, state } = await this.#deps.store.update((current, alive) => {
      // Builds whose replica died without ending them no longer count toward their tenant's quota.
      const running = current.running.filter(
        (r) => alive.builds.has(r.id) || now - (r.sinceMs ?? 0) < RUNNING_GRACE_MS,
      );
      const gone = current.waiting.filter(
        (w) => w.request === undefined && w.owner !== replica && !alive.replicas.has(w.owner),
      );
      const start: QueueState = { ...current, running };
      let next = gone.reduce<QueueState>((s, w) => withoutWaiting(s, w.id), start);
      const pick = pickNext(
        next,
        (w) => w.request !== undefined || (w.owner === replica && this.#held.has(w.id)),
      );
      if (pick !== undefined) next = withTaken(next, pick, now);
      return { state: next, value: { taken: pick, dropped: gone, state: next } };
    });
    this.#report(state);
    await Promise.all(
      dropped.map((entry) =>
        this.#endUnstarted(
          entry.id,
          `its replica ${entry.owner} stopped, and the credentials of its request were only there`,
        ),
      ),
    );
    if (taken !== undefined) await this.#deps.store.changed();
    return taken;
  }

  async #endUnstarted(id: string, reason: string): Promise<void> {
    this.#held.delete(id);
    await this.#deps
      .endUnstarted(id, serviceError('BUILD_NOT_STARTED', { reason }))
      .catch((err: unknown) => this.#deps.logger.warn({ err, buildId: id }, 'could not end a queued build'));
  }

  /** `err`, a refusal, counted by the answer stage (answer.ts). */
  #counted(err: Error): Error {
    countRefusal(this.#deps.metrics, err);
    return err;
  }

  /** The 429 of a full queue, or of a tenant at its quota of waiting builds. */
  #refuseFull(state: QueueState, tenant: string, quota: TenantQuota | undefined): void {
    const retryAfterSeconds = drainSeconds(state, state.waiting.length, FULL_RETRY_AFTER_SECONDS);
    if (state.waiting.length >= this.#deps.config.build.maxQueued) {
      throw this.#counted(
        serviceError('QUEUE_FULL', { queued: state.waiting.length }, { retryAfterSeconds }),
      );
    }
    const waiting = waitingOf(state, tenant);
    if (quota?.maxQueued !== undefined && waiting >= quota.maxQueued) {
      throw this.#counted(
        serviceError('TENANT_QUEUE_FULL', { tenant, queued: waiting }, { retryAfterSeconds }),
      );
    }
  }

  #report(state: QueueState): void {
    for (const queueClass of QUEUE_CLASSES) {
      this.#deps.metrics.queueDepth.set(
        { class: queueClass },
        state.waiting.filter((w) => w.class === queueClass).length,
      );
    }
  }
}
