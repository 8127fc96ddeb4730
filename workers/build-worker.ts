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
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { createBuildQueue, type BuildQueue } from './queue.js';
import { scratchIdentityKey, type SecretIdentityKey } from './builder/secret-identity-key.js';
import { withSecretsIdentity } from './builder/secret-identity.js';
import type { JobOutcome } from './reuse/decision.js';

export { failureStatus };

/** How long a request waits for the build id of an earlier request with its key being admitted. */
const ATTACH_WAIT_MS = 10_000;
/** One long poll of an attached request's wait. */
const ATTACHED_POLL_MS = 60_000;

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
}

/** One submitted plan, waited for by its request. */
export interface Submission extends StartOptions {
  /** Aborted when the client goes away: the build is cancelled (when it is its last waiter). */
  readonly signal: AbortSignal;
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
    this.#queue =
      options.queue ??
      createBuildQueue({
        maxConcurrent: ctx.config.build.maxConcurrent,
        shutdownSignal: ctx.shutdownSignal,
        metrics: ctx.metrics,
      });
  }

  /** Each builder's state as this instance sees it (readiness, docs/fleet.md). */
  builders(): (BuilderState & { inFlight: number })[] {
    return this.#fleet.states();
  }

  /** Builds (or reuses) `plan`; throws a ServiceError (BUSY: 429 with its Retry-After). */
  async submit(plan: BuildPlan, submission: Submission): Promise<BuildResult> {
    const resource = this.#resource(submission.logger);
    const { result } = this.#run(plan, submission, resource);
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
    const resource = this.#resource(options.logger);
    const never = new AbortController().signal;
    const { result } = this.#run(plan, { ...options, signal: never }, resource);
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
    const local = this.#local.get(id);
    if (local !== undefined) local.cancel(by);
    else await this.#ctx.builds.requestCancel(id, by);
    return record;
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

  /** Resolves once no build runs here (async ones included): the drain on SIGTERM waits for it. */
  async drained(): Promise<void> {
    while (this.#runs.size > 0) await Promise.all([...this.#runs]);
  }

  #admission(plan: BuildPlan, submission: Submission, resource: BuildResource): Admission {
    const deps: BuildDeps = { ...this.#deps, logger: submission.logger };
    const build = newBuild(submission, plan);
    return {
      queue: this.#queue,
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
