/**
 * The build worker: the HTTP layer's one face to builds (submit, start, cancel, attach, drain).
 * It holds the parts and hands each call to its owner: the runs (build-runs.ts, the flow and the
 * record), the queued builds (queued-builds.ts), idempotency (idempotency.ts), the builder fleet.
 */
import type { BuildAnswer, BuildEndedListener, BuildRecord } from '../src/builds/types.js';
import { serviceError } from '../src/errors/errors.js';
import { cancelledBy, countRefusal } from './flow/answer.js';
import { createBuildDeps } from './job/build-deps.js';
import { BuildRuns } from './flow/build-runs.js';
import { BuilderFleet } from './builder/fleet/fleet.js';
import type { BuilderState } from './builder/fleet/health.js';
import { IdempotentRequests, type Attachment, type Idempotency } from './flow/idempotency.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { createBuildQueue, type BuildQueue } from './queue/slots.js';
import { QueuedBuilds } from './flow/queued-builds.js';
import { tenantOf } from '../src/rules/tenants.js';
import type {
  BuildWorkerContext,
  BuildWorkerOptions,
  StartOptions,
  Submission,
} from './flow/worker-types.js';

export type { BuildJobRunner, BuildWorkerOptions } from './flow/worker-types.js';
export type { Idempotency } from './flow/idempotency.js';

export class BuildWorker {
  readonly #ctx: BuildWorkerContext;
  readonly #queue: BuildQueue;
  readonly #fleet: BuilderFleet;
  readonly #runs: BuildRuns;
  readonly #queued: QueuedBuilds;
  readonly #keys: IdempotentRequests;
  #stopped: Promise<void> | undefined;

  constructor(ctx: BuildWorkerContext, options: BuildWorkerOptions = {}) {
    this.#ctx = ctx;
    const deps = createBuildDeps(ctx);
    ctx.shutdownSignal.addEventListener('abort', () => deps.reuse.registry.close(), { once: true });
    this.#fleet = new BuilderFleet({
      config: ctx.config,
      logger: ctx.logger,
      metrics: ctx.metrics.builders,
      groups: ctx.processGroups,
      ...(options.probe === undefined ? {} : { probe: options.probe }),
    });
    this.#fleet.health.start(ctx.shutdownSignal);
    this.#queue =
      options.queue ??
      createBuildQueue({
        maxConcurrent: ctx.config.build.maxConcurrent,
        shutdownSignal: ctx.shutdownSignal,
        metrics: ctx.metrics,
      });
    this.#runs = new BuildRuns(ctx, { deps, queue: this.#queue, fleet: this.#fleet, runJob: options.runJob });
    // A DELETE on another replica (Redis mode) reaches the builds this instance runs.
    ctx.builds.onCancel((id, by) => this.#runs.local(id)?.cancel(by));
    // A build whose replica died ends here, when this replica's read finds it lost: its events too.
    ctx.builds.onLost((record) => void this.#runs.tellEnded(record));
    // A build of this replica run again elsewhere (its lease lapsed and was taken): stopped here.
    ctx.builds.onTakenOver?.((id) => void this.#runs.letGo(id));
    this.#queued = new QueuedBuilds(ctx, this.#runs, this.#queue);
    this.#keys = new IdempotentRequests(ctx.builds, ctx.metrics, ctx.logger);
  }

  /** Each builder's state as this instance sees it (readiness, docs/fleet.md). */
  builders(): (BuilderState & { inFlight: number })[] {
    return this.#fleet.states();
  }

  /** Builds (or reuses) `plan`; throws a ServiceError (BUSY: 429 with its Retry-After). */
  async submit(plan: BuildPlan, submission: Submission): Promise<BuildResult> {
    const tenant = submission.tenant ?? tenantOf(plan);
    await this.#queued.waiting.refuseSync(tenant);
    const resource = this.#runs.resource(submission.logger, tenant);
    const result = this.#runs.run(plan, submission, resource);
    this.#queued.countRunning(resource, tenant, result);
    if (submission.idempotency !== undefined) void this.#keys.bind(submission.idempotency, resource.id);
    return result;
  }

  /**
   * Starts `plan` and answers its record once it is admitted (before the clone), or queued when no
   * slot is free; the build runs on apart from any connection. Throws as `submit` does (429, 503).
   */
  async start(plan: BuildPlan, options: StartOptions): Promise<BuildRecord> {
    try {
      return await this.#start(plan, options);
    } catch (err) {
      // Refused, or the store failed (a failover, maxmemory): a key no build was bound to is free
      // again for the request's retry, once the store answers (a bound key stays bound).
      if (options.idempotency !== undefined) this.#keys.releaseSoon(options.idempotency);
      throw err;
    }
  }

  async #start(plan: BuildPlan, options: StartOptions): Promise<BuildRecord> {
    const tenant = options.tenant ?? tenantOf(plan);
    const waits = await this.#queued.waiting.mustWait(tenant);
    const slot = waits === undefined ? this.#queue.reserve() : undefined;
    if (slot === undefined) return this.#queued.enqueue(plan, options, tenant, waits);
    const resource = this.#runs.resource(options.logger, tenant);
    const never = new AbortController().signal;
    const submission = { ...options, signal: never, reservation: slot };
    const result = this.#runs.run(plan, submission, resource);
    this.#queued.countRunning(resource, tenant, result, { plan, submission });
    result.catch(() => undefined);
    const id = await Promise.race([resource.id, result.then(() => resource.id)]);
    if (options.idempotency !== undefined) await this.#keys.bind(options.idempotency, resource.id);
    // Ended before it had an id: refused (429), or its record could not be written.
    if (id === undefined) await result;
    const record = id === undefined ? undefined : await this.#ctx.builds.get(id);
    if (record === undefined) throw serviceError('STORE_UNAVAILABLE');
    return record;
  }

  /** The record of build `id` as the store keeps it, whichever replica runs it. O(1). */
  record(id: string): Promise<BuildRecord | undefined> {
    return this.#ctx.builds.get(id);
  }

  /** Cancels the build `id` (queued, here, or on the replica running it); its record as it stands. */
  async cancel(id: string, by: string): Promise<BuildRecord> {
    const record = await this.#ctx.builds.get(id);
    if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
    if (record.phase === 'finished') throw serviceError('BUILD_FINISHED', { id });
    // Taken out of the queue: it never runs.
    if (record.phase === 'queued' && (await this.#queued.waiting.remove(id))) {
      await this.#runs.endUnstarted(id, cancelledBy(by, undefined));
      return record;
    }
    const local = this.#runs.local(id);
    if (local !== undefined) local.cancel(by);
    else await this.#ctx.builds.requestCancel(id, by);
    return record;
  }

  /** A request refused before it reached a build (its body, its Idempotency-Key): counted as such. */
  refused(err: unknown): void {
    countRefusal(this.#ctx.metrics, err);
  }

  /** The build an Idempotency-Key attaches a request to (idempotency.ts). */
  attach(idempotency: Idempotency): Promise<Attachment> {
    return this.#keys.attach(idempotency);
  }

  answerOf(id: string, signal?: AbortSignal): Promise<BuildAnswer> {
    return this.#keys.answerOf(id, signal);
  }

  attached(id: string): Promise<BuildRecord> {
    return this.#keys.attached(id);
  }

  /** Called with each build's finished record before any waiter gets its answer. */
  onBuildEnded(listener: BuildEndedListener): void {
    this.#runs.onEnded(listener);
  }

  /** The places in the queue of the queued builds `ids` (GET /builds, docs/queue.md). */
  queuePositions(ids: readonly string[]): Promise<Map<string, { position: number; ahead: number }>> {
    return this.#queued.waiting.positions(ids);
  }

  /**
   * Takes no more builds from the queue (SIGTERM, at once): what waits there stays for the other
   * replicas; the queued builds only this replica could run (the credentials of their request are
   * here alone) end as failures now, with that reason. Called again: the same stop.
   */
  stopTaking(): Promise<void> {
    this.#stopped ??= this.#queued.waiting.stop();
    return this.#stopped;
  }

  /**
   * The grace is over and builds still run here: each whose request any replica can plan again
   * (no credentials of its own) goes back to the shared queue and another replica runs it; the
   * others are killed with the shutdown (`killed: the service is stopping`). Answers how many went
   * back. O(builds running here).
   */
  handBack(): Promise<number> {
    return this.#runs.handBack((id, asked) => this.#queued.requeue(id, asked));
  }

  /**
   * Resolves once no build runs here (async ones included): the drain on SIGTERM waits for it. No
   * queued build starts any more; those only this replica could run end as failures.
   */
  async drained(): Promise<void> {
    await this.stopTaking();
    await Promise.all([this.#runs.settled(), this.#fleet.settled()]);
  }
}
