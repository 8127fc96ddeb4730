/**
 * The build worker: the one owner of the build flow. src/service.ts makes one at start-up and the
 * HTTP layer hands it plans (`submit`); everything after the plan happens here: joining an
 * identical build in flight, the queue (or 429), the recorded job, reuse, following and leases,
 * the build metrics and the outcome's service-log line.
 */
import { supplyChainOf } from '../src/supply-chain/supply-chain.js';
import { busyRetryAfter } from './common/retry-after.js';
import type { BuildLeases } from './leases/leases.js';
import { recordBuild } from '../src/builds/reporter.js';
import type { BuildRegistry, BuildReporter, NewBuild } from '../src/builds/types.js';
import type { Config } from '../src/config/types.js';
import type { EndedBuild } from '../src/events/types.js';
import {
  busy,
  buildersFull,
  BuildersFullError,
  BusyError,
  internal,
  isServiceError,
} from '../src/errors/errors.js';
import { cancellationOf } from '../src/exec/cancellation.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { LogStore } from '../src/logs/types.js';
import type { Logger } from '../src/observability/logger.js';
import type { BuildStatus, Metrics } from '../src/observability/metrics.js';
import type { BuildDeps } from './build-deps.js';
import { isFollow, runBuildJob, type JobOutcome, type JobReuse } from './build-job.js';
import { devcontainerCliBundle } from './builder/devcontainer-build.js';
import { BuilderFleet, type Placement } from './builder/fleet/fleet.js';
import type { BuilderState } from './builder/fleet/health.js';
import type { Probe } from './builder/fleet/probe.js';
import { RemoteBuilder } from './builder/remote-builder.js';
import { remoteTip } from './git/ls-remote.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { createBuildQueue, type BuildQueue } from './queue.js';
import { coordinateBuild, type Coordinator } from './coordinate.js';
import { createReuseDeps } from './reuse/reuse-step.js';

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
  /** Aborted when the process must stop now: the worker's registry client closes. */
  readonly shutdownSignal: AbortSignal;
  /** Awaited with the finished build's record and answer before the answer is sent (events). */
  readonly onBuildEnded?: (record: EndedBuild) => Promise<void>;
}

export interface BuildWorkerOptions {
  /** The job runner (default: build-job.ts); unit tests inject a fake. */
  readonly runJob?: BuildJobRunner;
  /** The queue (default: one per worker, sized by config.build.maxConcurrent). */
  readonly queue?: BuildQueue;
  /** The builders' health probe (default: HTTP/2 PING, fleet/probe.ts). */
  readonly probe?: Probe;
}

/** One submitted plan: the request it came with. */
export interface Submission {
  readonly requestId: string;
  /** The request's logger (carries its id). */
  readonly logger: Logger;
  /** Aborted when the client goes away: the build is cancelled. */
  readonly signal: AbortSignal;
}

/** The final status of an admitted job that threw. */
export function failureStatus(err: unknown): BuildStatus {
  return isServiceError(err) && err.status < 500 ? 'invalid_request' : 'failure';
}

/** The image a plan targets before its commit is known: `<registry>/<name>[:<tag>]`. */
const targetImage = (plan: BuildPlan): string =>
  `${plan.image.registry}/${plan.image.name}${plan.image.tag === undefined ? '' : `:${plan.image.tag}`}`;

function newBuild(requestId: string, plan: BuildPlan): NewBuild {
  return {
    requestId,
    repository: plan.repository,
    ...(plan.branch === undefined ? {} : { branch: plan.branch }),
    image: targetImage(plan),
  };
}

/** A clock started at submission: seconds since. */
function stopwatch(): () => number {
  const started = performance.now();
  return () => (performance.now() - started) / 1000;
}

export class BuildWorker {
  readonly #ctx: BuildWorkerContext;
  readonly #deps: BuildDeps;
  readonly #queue: BuildQueue;
  readonly #runJob: BuildJobRunner;
  readonly #fleet: BuilderFleet;

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
      reuse: createReuseDeps(ctx.config.insecureRegistries, ctx.leases, supplyChainOf(ctx.config)),
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
    const seconds = stopwatch();
    try {
      const result = await coordinateBuild(
        plan,
        this.#coordinator(plan, submission, seconds),
        submission.signal,
      );
      this.#succeeded(plan, submission.logger, result, seconds());
      await this.#ended(submission, { status: 200, body: { ...result } });
      return result;
    } catch (err) {
      if (err instanceof BusyError || err instanceof BuildersFullError)
        throw await this.#busy(plan, submission.logger, err instanceof BusyError);
      this.#failed(plan, submission, err, seconds());
      await this.#ended(submission, {
        status: 500,
        body: {},
        ...(isServiceError(err) ? { status: err.status, body: err.toBody() } : {}),
      });
      throw err;
    }
  }

  /** The listener gets this request's finished build (none when it followed another request's). */
  async #ended(submission: Submission, answer: NonNullable<EndedBuild['answer']>): Promise<void> {
    const [record] =
      this.#ctx.onBuildEnded === undefined
        ? []
        : await this.#ctx.builds.list({ requestId: submission.requestId }).catch(() => []);
    if (record?.phase === 'finished')
      await this.#ctx
        .onBuildEnded?.({ ...record, answer })
        .catch((err: unknown) => submission.logger.warn({ err }, 'build end listener failed'));
  }

  #coordinator(plan: BuildPlan, submission: Submission, seconds: () => number): Coordinator {
    const deps: BuildDeps = { ...this.#deps, logger: submission.logger };
    const build = newBuild(submission.requestId, plan);
    return {
      queue: this.#queue,
      deps,
      deadlineSeconds: this.#ctx.config.build.cloneTimeoutSeconds + this.#ctx.config.build.timeoutSeconds,
      remoteTip: (p, signal) => remoteTip(p, deps, signal),
      job: (signal, reuse) => {
        // Synchronously placed (or busy: every healthy builder full) before anything is recorded.
        const placement = this.#fleet.place(plan.repository, plan.branch);
        const placed = placement === undefined ? deps : { ...deps, remoteBuilder: placement };
        const record = placement === undefined ? build : { ...build, builder: placement.endpoint };
        return this.#runRecorded(record, submission.logger, seconds, placement, (reporter) =>
          this.#runJob(plan, placed, signal, reporter, reuse),
        );
      },
    };
  }

  /** Runs an admitted job recorded in the registry: started, reported on by the job, finished with its outcome. */
  async #runRecorded(
    build: NewBuild,
    logger: Logger,
    seconds: () => number,
    placement: Placement | undefined,
    job: (reporter: BuildReporter) => Promise<JobOutcome>,
  ): Promise<JobOutcome> {
    const recording = await recordBuild(this.#ctx.builds, build, logger).catch((err: unknown) => {
      placement?.finish('failure');
      throw err;
    });
    if (placement !== undefined) placement.onMove = (endpoint) => void recording.reporter.builder(endpoint);
    try {
      const result = await job(recording.reporter);
      placement?.finish('success');
      // A job that follows a build with the same key ends here; the answer is that build's reuse.
      const image = isFollow(result) ? result.partial.image : result.image;
      await recording.finish({ status: 'success', durationSeconds: seconds(), image });
      return result;
    } catch (err) {
      placement?.finish(failureStatus(err));
      await recording.finish({
        status: failureStatus(err),
        durationSeconds: seconds(),
        error: (isServiceError(err) ? err : internal(err)).message,
      });
      throw err;
    }
  }

  #succeeded(plan: BuildPlan, logger: Logger, result: BuildResult, seconds: number): void {
    this.#ctx.metrics.countBuild('success', seconds);
    logger.info(
      {
        repository: plan.repository,
        image: result.image,
        commit: result.commit,
        durationMs: Math.round(seconds * 1000),
      },
      'build succeeded',
    );
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
      ? busy(this.#queue.capacity, retryAfter)
      : buildersFull(this.#ctx.config.build.maxPerBuilder, retryAfter);
  }

  #failed(plan: BuildPlan, submission: Submission, err: unknown, seconds: number): void {
    const { logger } = submission;
    const status = failureStatus(err);
    this.#ctx.metrics.countBuild(status, seconds);
    const cancelled = cancellationOf(submission.signal.reason);
    if (cancelled !== undefined) {
      logger.warn({ repository: plan.repository, durationMs: Math.round(seconds * 1000) }, cancelled.message);
    }
    logger.info(
      {
        repository: plan.repository,
        status,
        code: isServiceError(err) ? err.code : 'INTERNAL',
        ...(isServiceError(err) && err.details.logId !== undefined ? { logId: err.details.logId } : {}),
      },
      'build failed',
    );
  }
}
