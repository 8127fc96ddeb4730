/**
 * The build worker: the HTTP layer's interface to builds. src/service.ts makes one at start-up and
 * the HTTP layer hands it plans (`submit`); the build's stages are build-flow.ts's. The worker
 * wires their parts: the queue, the builder fleet (a job's placement), the build's record in the
 * registry, the reuse side, and the 429 with its Retry-After.
 */
import { supplyChainOf } from '../src/supply-chain/supply-chain.js';
import { busyRetryAfter } from './common/retry-after.js';
import type { BuildLeases } from './leases/leases.js';
import { recordBuild } from '../src/builds/reporter.js';
import type { BuildRegistry, BuildReporter, NewBuild } from '../src/builds/types.js';
import type { Config } from '../src/config/types.js';
import type { EndedBuild } from '../src/events/types.js';
import { busy, buildersFull, BusyError, internal, isServiceError } from '../src/errors/errors.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { LogStore } from '../src/logs/types.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import type { JobReuse, Admission } from './admit.js';
import { failureStatus, stopwatch } from './answer.js';
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
import { isFollowing, type JobOutcome } from './reuse/decision.js';
import type { Retention } from '../src/retention/retention.js';

export { failureStatus };

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
  /** Image retention: told what each answer and each reuse served (docs/retention.md). */
  readonly retention?: Pick<Retention, 'served'>;
  /** Awaited with the finished build's record and answer before the answer is sent (events). */
  readonly onBuildEnded?: (record: EndedBuild) => Promise<void>;
}

export interface BuildWorkerOptions {
  /** The job runner (default: build-flow.ts's stages 2 to 9); unit tests inject a fake. */
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
  /** What started it (absent: a POST /build). */
  readonly trigger?: NewBuild['trigger'];
  /** Told the build's id once it is recorded. */
  readonly onRecorded?: (id: string) => void;
}

/** The image a plan targets before its commit is known: `<registry>/<name>[:<tag>]`. */
const targetImage = (plan: BuildPlan): string =>
  `${plan.image.registry}/${plan.image.name}${plan.image.tag === undefined ? '' : `:${plan.image.tag}`}`;

function newBuild(requestId: string, plan: BuildPlan, trigger?: NewBuild['trigger']): NewBuild {
  return {
    requestId,
    ...(trigger === undefined ? {} : { trigger }),
    repository: plan.repository,
    ...(plan.branch === undefined ? {} : { branch: plan.branch }),
    image: targetImage(plan),
  };
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
      reuse: createReuseDeps(
        ctx.config.insecureRegistries,
        ctx.leases,
        supplyChainOf(ctx.config),
        ctx.retention && ((repository, digest) => ctx.retention?.served(repository, [digest])),
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
    const result = await runBuild({
      plan,
      admission: this.#admission(plan, submission, seconds),
      signal: submission.signal,
      refused: (err) => this.#busy(plan, submission.logger, err instanceof BusyError),
      answering: { logger: submission.logger, metrics: this.#ctx.metrics, seconds },
    });
    this.#ctx.retention?.served(`${result.registry}/${result.name}`, [result.digest, `tag:${result.tag}`]);
    return result;
  }

  #admission(plan: BuildPlan, submission: Submission, seconds: () => number): Admission {
    const deps: BuildDeps = { ...this.#deps, logger: submission.logger };
    const build = newBuild(submission.requestId, plan, submission.trigger);
    return {
      queue: this.#queue,
      deps,
      deadlineSeconds: this.#ctx.config.build.cloneTimeoutSeconds + this.#ctx.config.build.timeoutSeconds,
      refusePlatforms: () => this.#fleet.refuse(plan.platforms),
      remoteTip: (p, signal) => remoteTip(p, deps, signal),
      job: (signal, reuse) => {
        // Synchronously placed (or busy: every healthy builder full) before anything is recorded.
        const placement = this.#fleet.place(plan.repository, plan.branch, plan.platforms);
        const placed = placement === undefined ? deps : { ...deps, remoteBuilder: placement };
        const record = placement === undefined ? build : { ...build, ...placement.record() };
        return this.#runRecorded(record, submission, seconds, placement, (reporter) =>
          this.#runJob(plan, placed, signal, reporter, reuse),
        );
      },
    };
  }

  /** Runs an admitted job recorded in the registry: started, reported on by the job, finished with its outcome. */
  async #runRecorded(
    build: NewBuild,
    submission: Pick<Submission, 'logger' | 'onRecorded'>,
    seconds: () => number,
    placement: Placement | undefined,
    job: (reporter: BuildReporter) => Promise<JobOutcome>,
  ): Promise<JobOutcome> {
    const recording = await recordBuild(this.#ctx.builds, build, submission.logger).catch((err: unknown) => {
      placement?.finish('failure');
      throw err;
    });
    if (recording.id !== undefined) submission.onRecorded?.(recording.id);
    if (placement !== undefined)
      placement.onMove = (endpoint, builders) => void recording.reporter.builder(endpoint, builders);
    try {
      const result = await job(recording.reporter);
      placement?.finish('success');
      // A job that follows a build with the same key ends here; the answer is that build's reuse.
      const image = isFollowing(result) ? result.soFar.image : result.image;
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
}
