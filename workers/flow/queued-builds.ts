/**
 * Async builds and prebuilds that wait for a slot (docs/queue.md), as the worker starts them: a
 * queued record at once, each taken build run in its reserved slot (planned again unless this
 * replica held it), and the builds started at once counted toward their tenant's quota.
 */
import type { BuildRecord } from '../../src/builds/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { retryAfterDelays } from '../../src/errors/retry.js';
import { createMemoryQueue } from '../../src/queue/memory-queue.js';
import type { Admission } from '../../src/queue/types.js';
import type { BuildResource } from './build-resource.js';
import type { Logger } from '../../src/observability/logger.js';
import type { BuildRuns, RunAsked } from './build-runs.js';
import { tenantOf } from '../../src/rules/tenants.js';
import { planBuild } from '../plan/plan.js';
import type { BuildPlan, BuildRequest } from '../plan/plan-types.js';
import { countRefusal } from './answer.js';
import { newBuild } from './admission.js';
import type { BuildQueue } from '../queue/slots.js';
import { WaitingBuilds, type TakenBuild } from '../queue/waiting-builds.js';
import type { BuildWorkerContext, StartOptions, Submission } from './worker-types.js';

/**
 * The waits before each new try to adopt a build taken from the queue while the store fails (about
 * half a minute in all): a store restarting must not leave a taken build unstarted.
 */
const ADOPT_RETRIES_MS = [250, 500, 1000, 2000, 4000, 8000, 16_000];

/** Adopts the queued build `id` into `resource`, tried again while the store fails; false: no longer queued. */
async function adoptTaken(resource: BuildResource, id: string, logger: Logger): Promise<boolean> {
  try {
    return await retryAfterDelays(() => resource.adopt(id), { delaysMs: ADOPT_RETRIES_MS });
  } catch (err) {
    logger.warn({ err, buildId: id }, 'could not adopt a build taken from the queue');
    return false;
  }
}

/** The queue entry of the build `id` as any replica plans it again; undefined: only this one can. */
function portableEntry(id: string, { plan, submission }: RunAsked) {
  if (plan.request === undefined) return undefined;
  return {
    id,
    class: submission.trigger ?? 'api',
    tenant: submission.tenant ?? tenantOf(plan),
    request: { ...plan.request },
    requestId: submission.requestId,
    ...(submission.requestedBy === undefined ? {} : { requestedBy: submission.requestedBy }),
  };
}

export class QueuedBuilds {
  readonly #ctx: BuildWorkerContext;
  readonly #runs: BuildRuns;
  readonly waiting: WaitingBuilds;

  constructor(ctx: BuildWorkerContext, runs: BuildRuns, slots: BuildQueue) {
    this.#ctx = ctx;
    this.#runs = runs;
    const queue = ctx.queue ?? { store: createMemoryQueue(), replica: 'local' };
    this.waiting = new WaitingBuilds({
      config: ctx.config,
      store: queue.store,
      shared: ctx.queue !== undefined,
      replica: queue.replica,
      registry: ctx.builds,
      slots,
      logger: ctx.logger,
      metrics: ctx.metrics,
      counted: (err) => countRefusal(ctx.metrics, err),
      run: (taken) => void this.#runTaken(taken),
      endUnstarted: (id, err) => runs.endUnstarted(id, err),
    });
    ctx.shutdownSignal.addEventListener('abort', () => this.waiting.halt(), { once: true });
  }

  /**
   * Queues an async build or prebuild: its record (phase `queued`, its place) at once; `admission`,
   * the queue's counters the caller read to decide it must wait.
   */
  async enqueue(
    plan: BuildPlan,
    options: StartOptions,
    tenant: string,
    admission?: Admission,
  ): Promise<BuildRecord> {
    const id = await this.waiting.enqueue(
      newBuild(options, plan),
      { plan, options },
      { class: options.trigger ?? 'api', tenant },
      admission,
    );
    if (options.idempotency !== undefined) await this.#ctx.builds.bindKey(options.idempotency.key, id);
    const [record, places] = await Promise.all([this.#ctx.builds.get(id), this.waiting.positions([id])]);
    if (record === undefined) throw serviceError('STORE_UNAVAILABLE');
    const place = places.get(id);
    return place === undefined || record.phase !== 'queued' ? record : { ...record, queue: place };
  }

  /** Puts the build `id` that ran here back in the shared queue, as it was asked (build-runs.ts handBack). */
  requeue(id: string, asked: RunAsked): Promise<void> {
    const entry = portableEntry(id, asked);
    if (entry === undefined) throw new Error('a build whose request holds credentials stays here');
    return this.waiting.requeue(entry);
  }

  /**
   * A build started at once counts toward its tenant's quota until it ends (when quotas exist);
   * in Redis mode an async one any replica may run (`asked`) is kept in the queue meanwhile, to
   * run again should this replica die.
   */
  countRunning(resource: BuildResource, tenant: string, result: Promise<unknown>, asked?: RunAsked): void {
    const keep = this.#ctx.queue !== undefined && asked?.plan.request !== undefined;
    if (this.#ctx.config.build.quotas.length === 0 && !keep) return;
    void resource.id
      .then(async (id) => {
        if (id === undefined) return;
        const again = asked === undefined ? undefined : portableEntry(id, asked);
        await this.waiting.started(id, tenant, again);
        await result.catch(() => undefined);
        await this.waiting.ended(id);
      })
      .catch((err: unknown) => this.#ctx.logger.warn({ err }, 'the queue could not count a running build'));
  }

  /** Runs a build taken from the queue in its reserved slot: planned again unless this replica held it. */
  async #runTaken(taken: TakenBuild): Promise<void> {
    const { entry, slot } = taken;
    const logger = (taken.held?.options.logger ?? this.#ctx.logger).child({
      requestId: entry.requestId,
      buildId: entry.id,
    });
    let plan: BuildPlan;
    try {
      plan = taken.held?.plan ?? planBuild(entry.request as unknown as BuildRequest, this.#ctx.config);
    } catch (err) {
      slot.release();
      await this.#runs.endUnstarted(entry.id, err);
      await this.waiting.ended(entry.id).catch(() => undefined);
      return;
    }
    const resource = this.#runs.resource(logger);
    if (!(await adoptTaken(resource, entry.id, logger))) {
      slot.release();
      // Not run here: the queue no longer counts it here (nor keeps its entry to run again).
      await this.waiting.ended(entry.id).catch(() => undefined);
      return;
    }
    const submission: Submission = {
      requestId: entry.requestId,
      logger,
      ...(entry.class === 'api' ? {} : { trigger: entry.class }),
      ...(entry.requestedBy === undefined ? {} : { requestedBy: entry.requestedBy }),
      signal: new AbortController().signal,
      reservation: slot,
    };
    await this.#runs.run(plan, submission, resource).catch(() => undefined);
    await this.waiting.ended(entry.id).catch(() => undefined);
  }
}
