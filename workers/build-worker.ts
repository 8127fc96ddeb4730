/**
 * The build worker: the HTTP layer's interface to builds. src/service.ts makes one at start-up and
 * the HTTP layer hands it plans (`submit`); the build's stages are build-flow.ts's. The worker
 * wires their parts: the queue, the builder fleet (a job's placement), the build's record in the
 * registry, the reuse side, and the 429 with its Retry-After.
 */
import { supplyChainOf } from '../src/supply-chain/supply-chain.js';
import { ImageTarget } from '../src/rules/image-target.js';
import { busyRetryAfter } from './common/retry-after.js';
import type { BuildLeases } from './leases/leases.js';
import { BuildResource } from './build-resource.js';
import type {
  BuildAnswer,
  BuildEndedListener,
  BuildRecord,
  BuildRegistry,
  BuildReporter,
  BuildTrigger,
  NewBuild,
} from '../src/builds/types.js';
import type { Config } from '../src/config/types.js';
import { serviceError, BusyError } from '../src/errors/errors.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { LogStore } from '../src/logs/types.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import type { JobReuse, Admission } from './admit.js';
import {
  answerBuild,
  answerOf,
  cancelledBy,
  failureStatus,
  statusOfAnswer,
  stopwatch,
  type Answering,
} from './answer.js';
import type { RequestedBy } from '../src/rules/caller.js';
import { createReuseDeps, type BuildDeps } from './build-deps.js';
import { runBuild, runBuildJob } from './build-flow.js';
import { devcontainerCliBundle } from './builder/devcontainer-build.js';
import { BuilderFleet, type Placement } from './builder/fleet/fleet.js';
import type { BuilderState } from './builder/fleet/health.js';
import type { Probe } from './builder/fleet/probe.js';
import { RemoteBuilder } from './builder/remote-builder.js';
import { remoteTip } from './git/ls-remote.js';
import type { BuildPlan, BuildRequest, BuildResult } from './plan/plan-types.js';
import { createBuildQueue, type BuildQueue, type Reservation } from './queue.js';
import { planBuild } from './plan/plan.js';
import { createMemoryQueue } from '../src/queue/memory-queue.js';
import type { QueueStore } from '../src/queue/types.js';
import { tenantOf, WaitingBuilds, type TakenBuild } from './waiting-builds.js';
import { scratchIdentityKey, type SecretIdentityKey } from './builder/secret-identity-key.js';
import { withSecretsIdentity } from './builder/secret-identity.js';
import type { JobOutcome } from './reuse/decision.js';

export { failureStatus };

/** How long a request waits for the build id of an earlier request with its key being admitted. */
const ATTACH_WAIT_MS = 10_000;
/** One long poll of an attached request's wait. */
const ATTACHED_POLL_MS = 60_000;
/**
 * The waits before each new try to adopt a build taken from the queue while the store fails (about
 * half a minute in all): a store restarting must not leave a taken build unstarted.
 */
const ADOPT_RETRIES_MS = [250, 500, 1000, 2000, 4000, 8000, 16_000];

/** Adopts the queued build `id` into `resource`, tried again while the store fails; false: no longer queued. */
async function adoptTaken(resource: BuildResource, id: string, logger: Logger): Promise<boolean> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await resource.adopt(id);
    } catch (err) {
      const wait = ADOPT_RETRIES_MS[attempt];
      if (wait === undefined) {
        logger.warn({ err, buildId: id }, 'could not adopt a build taken from the queue');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

export type BuildJobRunner = (
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
) => Promise<JobOutcome>;

/** What the worker uses of the application. */
export interface BuildWorkerContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly logStore: LogStore;
  readonly builds: BuildRegistry;
  readonly leases: BuildLeases;
  readonly processGroups: ProcessGroups;
  /** The build secrets identity key (absent: the scratch space's, builder/secret-identity-key.ts). */
  readonly secretIdentityKey?: SecretIdentityKey;
  /** Aborted when the process must stop now: the worker's registry client closes. */
  readonly shutdownSignal: AbortSignal;
  /** Told the source image of each reuse (retention's "served", docs/retention.md). */
  readonly reuseSourceServed?: (repository: string, digest: string) => void;
  /** The shared queue (Redis mode; default: this instance's, in memory) and this replica's name. */
  readonly queue?: { readonly store: QueueStore; readonly replica: string } | undefined;
}

export interface BuildWorkerOptions {
  /** The job runner (default: build-flow.ts's stages 2 to 9); unit tests inject a fake. */
  readonly runJob?: BuildJobRunner;
  /** The queue (default: one per worker, sized by config.build.maxConcurrent). */
  readonly queue?: BuildQueue;
  /** The builders' health probe (default: HTTP/2 PING, fleet/probe.ts). */
  readonly probe?: Probe;
  /** false: builds offered secrets are not keyed by them (as before docs/secrets.md's rule); a benchmark's baseline only. */
  readonly keySecrets?: boolean;
}

/** An Idempotency-Key and the digest of the body it came with (never the body). */
export interface Idempotency {
  readonly key: string;
  readonly digest: string;
}

/** How a plan is started: the request it came with. */
export interface StartOptions {
  readonly requestId: string;
  /** The request's logger (carries its id). */
  readonly logger: Logger;
  readonly trigger?: BuildTrigger;
  /** Reserved with `attach` (which found no build to attach to): bound to the build's id. */
  readonly idempotency?: Idempotency;
  /** Who asked, when identities are enforced (kept in the build's record). */
  readonly requestedBy?: RequestedBy;
  /** The tenant of its quotas and turn in the queue (default: the repository's owner, docs/queue.md). */
  readonly tenant?: string;
}

/** One submitted plan, waited for by its request. */
export interface Submission extends StartOptions {
  /** Aborted when the client goes away: the build is cancelled (when it is its last waiter). */
  readonly signal: AbortSignal;
  /** The slot held for it (a build taken from the queue, or an async one started at once). */
  readonly reservation?: Reservation;
}

/** `queue` whose next job takes `slot` (later jobs of the same build wait for none). */
function withSlot(queue: BuildQueue, slot: Reservation | undefined): BuildQueue {
  if (slot === undefined) return queue;
  return {
    get inFlight() {
      return queue.inFlight;
    },
    capacity: queue.capacity,
    reserve: () => queue.reserve(),
    onFree: (listener) => queue.onFree(listener),
    run: (job, options = {}) => queue.run(job, { ...options, reservation: slot }),
  };
}

function newBuild(submission: Submission, plan: BuildPlan): NewBuild {
  return {
    requestId: submission.requestId,
    ...(submission.trigger === undefined ? {} : { trigger: submission.trigger }),
    ...(submission.idempotency === undefined ? {} : { idempotencyKey: submission.idempotency.key }),
    ...(submission.requestedBy === undefined ? {} : { requestedBy: submission.requestedBy }),
    repository: plan.repository,
    ...(plan.branch === undefined ? {} : { branch: plan.branch }),
    image: ImageTarget.of(plan.image).image,
  };
}

export class BuildWorker {
  readonly #ctx: BuildWorkerContext;
  readonly #deps: BuildDeps;
  readonly #queue: BuildQueue;
  readonly #runJob: BuildJobRunner;
  readonly #fleet: BuilderFleet;
  /** The builds this instance runs, by record id (DELETE /builds/{id} finds them here). */
  readonly #local = new Map<string, BuildResource>();
  readonly #listeners: BuildEndedListener[] = [];
  /** Every request's flow in progress, sync or async (the drain on SIGTERM waits for them). */
  readonly #runs = new Set<Promise<unknown>>();
  /** Async builds and prebuilds waiting for a slot (docs/queue.md). */
  readonly #waiting: WaitingBuilds;

  constructor(ctx: BuildWorkerContext, options: BuildWorkerOptions = {}) {
    this.#ctx = ctx;
    this.#runJob = options.runJob ?? runBuildJob;
    this.#deps = {
      config: ctx.config,
      logStore: ctx.logStore,
      logger: ctx.logger,
      metrics: ctx.metrics,
      groups: ctx.processGroups,
      // Without builders: a build's builder is this (nothing to set up, no BUILDX_BUILDER).
      remoteBuilder: new RemoteBuilder(ctx.config, undefined, ctx.processGroups),
      devcontainerCli: devcontainerCliBundle(),
      secretIdentityKey:
        options.keySecrets === false
          ? null
          : (ctx.secretIdentityKey ?? scratchIdentityKey(ctx.config.scratchDir)),
      reuse: createReuseDeps(
        ctx.config.insecureRegistries,
        ctx.leases,
        supplyChainOf(ctx.config),
        ctx.reuseSourceServed,
      ),
    };
    ctx.shutdownSignal.addEventListener('abort', () => this.#deps.reuse.registry.close(), { once: true });
    this.#fleet = new BuilderFleet({
      config: ctx.config,
      logger: ctx.logger,
      metrics: ctx.metrics.builders,
      groups: ctx.processGroups,
      ...(options.probe === undefined ? {} : { probe: options.probe }),
    });
    this.#fleet.health.start(ctx.shutdownSignal);
    // A DELETE on another replica (Redis mode) reaches the builds this instance runs.
    ctx.builds.onCancel((id, by) => this.#local.get(id)?.cancel(by));
    // A build whose replica died ends here, when this replica's read finds it lost: its events too.
    ctx.builds.onLost((record) => void this.#tellEnded(record));
    this.#queue =
      options.queue ??
      createBuildQueue({
        maxConcurrent: ctx.config.build.maxConcurrent,
        shutdownSignal: ctx.shutdownSignal,
        metrics: ctx.metrics,
      });
    const queue = ctx.queue ?? { store: createMemoryQueue('local'), replica: 'local' };
    this.#waiting = new WaitingBuilds({
      config: ctx.config,
      store: queue.store,
      shared: ctx.queue !== undefined,
      replica: queue.replica,
      registry: ctx.builds,
      slots: this.#queue,
      logger: ctx.logger,
      metrics: ctx.metrics,
      run: (taken) => void this.#runTaken(taken),
      endUnstarted: (id, err) => this.#endUnstarted(id, err),
    });
    ctx.shutdownSignal.addEventListener('abort', () => this.#waiting.halt(), { once: true });
  }

  /** Each builder's state as this instance sees it (readiness, docs/fleet.md). */
  builders(): (BuilderState & { inFlight: number })[] {
    return this.#fleet.states();
  }

  /** Builds (or reuses) `plan`; throws a ServiceError (BUSY: 429 with its Retry-After). */
  async submit(plan: BuildPlan, submission: Submission): Promise<BuildResult> {
    const tenant = submission.tenant ?? tenantOf(plan);
    await this.#waiting.refuseSync(tenant);
    const resource = this.#resource(submission.logger);
    const { result } = this.#run(plan, submission, resource);
    this.#countRunning(resource, tenant, result);
    if (submission.idempotency !== undefined) void this.#bind(submission.idempotency, resource);
    return result;
  }

  /**
   * The build an Idempotency-Key attaches a request to: the id of the build an earlier request
   * with the same key and body started, or undefined when the key is new (it is then reserved:
   * pass it to `start` or `submit`). The same key with another body is a 422.
   */
  async attach(idempotency: Idempotency): Promise<string | undefined> {
    const deadline = Date.now() + ATTACH_WAIT_MS;
    for (;;) {
      const held = await this.#ctx.builds.reserveKey(idempotency.key, idempotency.digest);
      if (held.kind === 'reserved') return undefined;
      if (!held.sameBody) throw serviceError('IDEMPOTENCY_KEY_REUSED');
      if (held.buildId !== undefined) return held.buildId;
      // The first request is being admitted: its build's id comes within moments.
      if (Date.now() > deadline) throw serviceError('STORE_UNAVAILABLE');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * The answer of the build `id` for a request attached to it, waited for (a POST is counted in
   * service_builds_total once answered, as every POST is).
   */
  async answerOf(id: string, signal?: AbortSignal): Promise<BuildAnswer> {
    for (;;) {
      const record = await this.#ctx.builds.waitFinished(id, ATTACHED_POLL_MS, signal);
      if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
      if (record.answer !== undefined) {
        this.#ctx.metrics.countBuild(statusOfAnswer(record.answer), record.durationSeconds);
        return record.answer;
      }
      if (signal?.aborted === true) throw signal.reason;
    }
  }

  /** The record of the build `id` for an async request attached to it (counted once it is answered). */
  async attached(id: string): Promise<BuildRecord> {
    const record = await this.#ctx.builds.get(id);
    if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
    void this.answerOf(id).catch(() => undefined);
    return record;
  }

  /** Binds a reserved key to the build's id once admitted; frees it when the build was refused. */
  async #bind(idempotency: Idempotency, resource: BuildResource): Promise<void> {
    const id = await resource.id;
    try {
      if (id === undefined) await this.#ctx.builds.releaseKey(idempotency.key);
      else await this.#ctx.builds.bindKey(idempotency.key, id);
    } catch (err) {
      this.#ctx.logger.warn({ err, buildId: id }, 'could not record the idempotency key');
    }
  }

  /**
   * Starts `plan` and answers its record once it is admitted (before the clone); the build runs on
   * apart from any connection. Throws as `submit` does when it is refused (429, 503).
   */
  async start(plan: BuildPlan, options: StartOptions): Promise<BuildRecord> {
    const tenant = options.tenant ?? tenantOf(plan);
    const slot = (await this.#waiting.mustWait(tenant)) ? undefined : this.#queue.reserve();
    if (slot === undefined) return this.#enqueue(plan, options, tenant);
    const resource = this.#resource(options.logger);
    const never = new AbortController().signal;
    const { result } = this.#run(plan, { ...options, signal: never, reservation: slot }, resource);
    this.#countRunning(resource, tenant, result);
    result.catch(() => undefined);
    const id = await Promise.race([resource.id, result.then(() => resource.id)]);
    if (options.idempotency !== undefined) await this.#bind(options.idempotency, resource);
    // Ended before it had an id: refused (429), or its record could not be written.
    if (id === undefined) await result;
    const record = id === undefined ? undefined : await this.#ctx.builds.get(id);
    if (record === undefined) throw serviceError('STORE_UNAVAILABLE');
    return record;
  }

  /** Cancels the running build `id` (here, or on the replica running it); its record as it stands. */
  async cancel(id: string, by: string): Promise<BuildRecord> {
    const record = await this.#ctx.builds.get(id);
    if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
    if (record.phase === 'finished') throw serviceError('BUILD_FINISHED', { id });
    // Taken out of the queue: it never runs.
    if (record.phase === 'queued' && (await this.#waiting.remove(id))) {
      await this.#endUnstarted(id, cancelledBy(by, undefined));
      return record;
    }
    const local = this.#local.get(id);
    if (local !== undefined) local.cancel(by);
    else await this.#ctx.builds.requestCancel(id, by);
    return record;
  }

  /** Runs every build-ended listener on `record` (a build finished as lost elsewhere). */
  async #tellEnded(record: BuildRecord): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        await listener(record);
      } catch (err) {
        this.#ctx.logger.warn({ err, buildId: record.id }, 'a build-ended listener failed');
      }
    }
  }

  /** Called with each build's finished record before any waiter gets its answer. */
  onBuildEnded(listener: BuildEndedListener): void {
    this.#listeners.push(listener);
  }

  #resource(logger: Logger): BuildResource {
    return new BuildResource(this.#ctx.builds, logger, this.#listeners);
  }

  /** The flow of one request, its record ended with the answer before the result is handed on. */
  #run(plan: BuildPlan, submission: Submission, resource: BuildResource): { result: Promise<BuildResult> } {
    const elapsedSeconds = stopwatch();
    const answering: Answering = { logger: submission.logger, metrics: this.#ctx.metrics, elapsedSeconds };
    const signal = AbortSignal.any([submission.signal, resource.signal]);
    // Keyed before admission: the build key and the follow identity hold the secrets' identity.
    const flow = this.#keyed(plan, answering, signal).then((keyed) =>
      runBuild({
        plan: keyed,
        admission: this.#admission(keyed, submission, resource),
        signal,
        refused: (err) => this.#busy(keyed, submission.logger, err instanceof BusyError),
        answering,
      }),
    );
    const ended = async (): Promise<BuildResult> => {
      try {
        const result = await flow;
        await resource.end({
          status: 'success',
          durationSeconds: elapsedSeconds(),
          image: result.image,
          answer: answerOf({ ok: true, result }),
        });
        return result;
      } catch (thrown) {
        const cancelled = resource.cancelled;
        const err = cancelled?.by === undefined ? thrown : cancelledBy(cancelled.by, thrown);
        const answer = answerOf({ ok: false, err });
        await resource.end({
          status: failureStatus(err),
          durationSeconds: elapsedSeconds(),
          error: String(answer.body.error),
          answer,
        });
        throw err;
      } finally {
        // A slot held for this build and never taken (refused before its job) frees.
        submission.reservation?.release();
        void resource.id.then(
          (id) => id !== undefined && this.#local.get(id) === resource && this.#local.delete(id),
        );
      }
    };
    const result = ended();
    const settled = result.catch(() => undefined);
    this.#runs.add(settled);
    void settled.then(() => this.#runs.delete(settled));
    return { result };
  }

  /** `plan` with the identity of the secrets it offers (docs/secrets.md); a failure is the build's. */
  async #keyed(plan: BuildPlan, answering: Answering, signal: AbortSignal): Promise<BuildPlan> {
    try {
      return await withSecretsIdentity(plan, this.#deps.secretIdentityKey ?? null);
    } catch (err) {
      answerBuild(plan, answering, { ok: false, err }, signal);
      throw err;
    }
  }

  /** Each queued build's place in the queue (GET /builds, docs/queue.md). */
  queuePositions(): Promise<Map<string, { position: number; ahead: number }>> {
    return this.#waiting.positions();
  }

  /**
   * Resolves once no build runs here (async ones included): the drain on SIGTERM waits for it. No
   * queued build starts any more; those only this replica could run end as failures.
   */
  async drained(): Promise<void> {
    await this.#waiting.stop();
    while (this.#runs.size > 0) await Promise.all([...this.#runs]);
  }

  /** Queues an async build or prebuild: its record (phase `queued`, its place) at once. */
  async #enqueue(plan: BuildPlan, options: StartOptions, tenant: string): Promise<BuildRecord> {
    const build = newBuild({ ...options, signal: new AbortController().signal }, plan);
    const id = await this.#waiting.enqueue(
      build,
      { plan, options },
      { class: options.trigger ?? 'api', tenant },
    );
    if (options.idempotency !== undefined) await this.#ctx.builds.bindKey(options.idempotency.key, id);
    const [record, places] = await Promise.all([this.#ctx.builds.get(id), this.#waiting.positions()]);
    if (record === undefined) throw serviceError('STORE_UNAVAILABLE');
    const place = places.get(id);
    return place === undefined || record.phase !== 'queued' ? record : { ...record, queue: place };
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
      await this.#endUnstarted(entry.id, err);
      return;
    }
    const resource = this.#resource(logger);
    if (!(await adoptTaken(resource, entry.id, logger))) {
      slot.release();
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
    this.#local.set(entry.id, resource);
    const { result } = this.#run(plan, submission, resource);
    await result.catch(() => undefined);
    await this.#waiting.ended(entry.id).catch(() => undefined);
  }

  /** Ends the record of a queued build that never started, answered with `err`. */
  async #endUnstarted(id: string, err: unknown): Promise<void> {
    const record = await this.#ctx.builds.get(id);
    const resource = this.#resource(this.#ctx.logger);
    resource.bind(id);
    const answer = answerOf({ ok: false, err });
    const status = failureStatus(err);
    this.#ctx.metrics.countBuild(status);
    await resource.end({
      status,
      durationSeconds: record?.elapsedSeconds ?? 0,
      error: String(answer.body.error),
      answer,
    });
  }

  /** A build started at once counts toward its tenant's quota until it ends (when quotas exist). */
  #countRunning(resource: BuildResource, tenant: string, result: Promise<unknown>): void {
    if (this.#ctx.config.build.quotas.length === 0) return;
    void resource.id
      .then(async (id) => {
        if (id === undefined) return;
        await this.#waiting.started(id, tenant);
        await result.catch(() => undefined);
        await this.#waiting.ended(id);
      })
      .catch((err: unknown) => this.#ctx.logger.warn({ err }, 'the queue could not count a running build'));
  }

  #admission(plan: BuildPlan, submission: Submission, resource: BuildResource): Admission {
    const deps: BuildDeps = { ...this.#deps, logger: submission.logger };
    const build = newBuild(submission, plan);
    return {
      queue: withSlot(this.#queue, submission.reservation),
      deps,
      deadlineSeconds: this.#ctx.config.build.cloneTimeoutSeconds + this.#ctx.config.build.timeoutSeconds,
      refusePlatforms: () => this.#fleet.refuse(plan.platforms),
      remoteTip: (p, signal) => remoteTip(p, deps, signal),
      cancelSignal: resource.signal,
      followed: (buildId) => void buildId.then((id) => resource.follow(id)),
      job: (signal, reuse) => {
        // Synchronously placed (or busy: every healthy builder full) before anything is recorded.
        const placement = this.#fleet.place(plan.repository, plan.branch, plan.platforms);
        const placed = placement === undefined ? deps : { ...deps, remoteBuilder: placement };
        const record = placement === undefined ? build : { ...build, ...placement.record() };
        return this.#runPlaced(record, resource, reuse, placement, (reporter) =>
          this.#runJob(plan, placed, signal, reporter, reuse),
        );
      },
    };
  }

  /** Runs an admitted job on its placement, the build recorded in the registry on its first job. */
  async #runPlaced(
    build: NewBuild,
    resource: BuildResource,
    reuse: JobReuse | undefined,
    placement: Placement | undefined,
    job: (reporter: BuildReporter) => Promise<JobOutcome>,
  ): Promise<JobOutcome> {
    const reporter = await resource.record(build).catch((err: unknown) => {
      placement?.finish('failure');
      throw err;
    });
    // A queued build's record was made before it was placed: its builder is told now.
    if (resource.bound && build.builder !== undefined) void reporter.builder(build.builder, build.builders);
    const id = await resource.id;
    if (id !== undefined) this.#local.set(id, resource);
    reuse?.own.setBuildId(id);
    if (placement !== undefined)
      placement.onMove = (endpoint, builders) => void reporter.builder(endpoint, builders);
    try {
      const result = await job(reporter);
      placement?.finish('success');
      return result;
    } catch (err) {
      placement?.finish(failureStatus(err));
      throw err;
    }
  }

  /** The 429 for a full queue, with a Retry-After estimated from the builds in flight. */
  async #busy(plan: BuildPlan, logger: Logger, queueFull: boolean): Promise<Error> {
    this.#ctx.metrics.countBuild('busy');
    const retryAfter = await busyRetryAfter(this.#ctx.builds, logger);
    logger.warn(
      { repository: plan.repository, inFlight: this.#queue.inFlight, retryAfterSeconds: retryAfter },
      'build refused: busy',
    );
    return queueFull
      ? serviceError('BUSY', { running: this.#queue.capacity }, { retryAfterSeconds: retryAfter })
      : serviceError(
          'BUILDERS_FULL',
          { perBuilder: this.#ctx.config.build.maxPerBuilder },
          { retryAfterSeconds: retryAfter },
        );
  }
}
