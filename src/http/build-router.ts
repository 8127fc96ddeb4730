/**
 * POST /build: plan (every 400, no I/O) -> admit to the queue (or 429) -> await the job.
 * The request stays synchronous: the answer is the job's BuildResult or its error. A client
 * that goes away before the answer cancels its build (processes killed, slot freed, counted
 * `failure`, one line in the build's log and in the service log).
 * Metrics: every attempt is counted in service_builds_total{status}; admitted jobs (real
 * builds) are timed in service_build_duration_seconds{status}. Admitted jobs are recorded in the
 * build registry (GET /builds) with the request's id; the job reports its progress there. A 429's
 * Retry-After is estimated from the registry (src/builds/retry-after.ts). With build reuse on,
 * workers/reuse/coordinate.ts decides between joining a build in flight and leading a job.
 */
import Router from '@koa/router';
import { busyRetryAfter } from '../builds/busy-estimate.js';
import { recordBuild } from '../builds/reporter.js';
import type { BuildRegistry, BuildReporter, NewBuild } from '../builds/types.js';
import type { AppContext } from '../context.js';
import { busy, internal, isServiceError } from '../errors.js';
import { Cancellation, cancellationOf } from '../exec/cancellation.js';
import type { Logger } from '../observability/logger.js';
import type { BuildStatus } from '../observability/metrics.js';
import type { BuildDeps } from '../../workers/build-deps.js';
import { isFollow, runBuildJob, type JobOutcome, type JobReuse } from '../../workers/build-job.js';
import { devcontainerCliBundle } from '../../workers/builder/devcontainer-build.js';
import { RemoteBuilder } from '../../workers/builder/remote-builder.js';
import { remoteTip } from '../../workers/git/ls-remote.js';
import { planBuild } from '../../workers/plan.js';
import { readJsonBody } from './json-body.js';
import { requestScope } from './request-id.js';
import type { BuildPlan, BuildResult } from '../../workers/plan-types.js';
import { createBuildQueue, type BuildQueue } from '../../workers/queue.js';
import { coordinateBuild, type Coordinator } from '../../workers/reuse/coordinate.js';
import { createReuseDeps } from '../../workers/reuse/reuse-step.js';

export type BuildJobRunner = (
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
) => Promise<JobOutcome>;

/** What the build router uses of the application. */
export type BuildRouterContext = Pick<
  AppContext,
  'config' | 'logger' | 'metrics' | 'logStore' | 'shutdownSignal' | 'processGroups' | 'builds' | 'leases'
>;

export interface BuildRouterOptions {
  /** The job runner (default: workers/build-job.ts); unit tests inject a fake. */
  runJob?: BuildJobRunner;
  /** The queue (default: one per router, sized by config.build.maxConcurrent). */
  queue?: BuildQueue;
}

/** The final status of an admitted job that threw. */
function failureStatus(err: unknown): BuildStatus {
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

/** Runs an admitted job recorded in the registry: started, reported on by the job, finished with its outcome. */
async function runRecorded(
  builds: BuildRegistry,
  build: NewBuild,
  logger: Logger,
  seconds: () => number,
  job: (reporter: BuildReporter) => Promise<JobOutcome>,
): Promise<JobOutcome> {
  const recording = await recordBuild(builds, build, logger);
  try {
    const result = await job(recording.reporter);
    // A job that follows a build with the same key ends here; the answer is that build's reuse.
    const image = isFollow(result) ? result.partial.image : result.image;
    await recording.finish({ status: 'success', durationSeconds: seconds(), image });
    return result;
  } catch (err) {
    await recording.finish({
      status: failureStatus(err),
      durationSeconds: seconds(),
      error: (isServiceError(err) ? err : internal(err)).message,
    });
    throw err;
  }
}

export function createBuildRouter(ctx: BuildRouterContext, options: BuildRouterOptions = {}): Router {
  const runJob = options.runJob ?? runBuildJob;
  const deps: BuildDeps = {
    config: ctx.config,
    logStore: ctx.logStore,
    logger: ctx.logger,
    metrics: ctx.metrics,
    groups: ctx.processGroups,
    remoteBuilder: new RemoteBuilder(ctx.config, ctx.processGroups),
    devcontainerCli: devcontainerCliBundle(),
    reuse: createReuseDeps(ctx.config.insecureRegistries, ctx.leases),
  };
  ctx.shutdownSignal.addEventListener('abort', () => deps.reuse.registry.close(), { once: true });
  const deadlineSeconds = ctx.config.build.cloneTimeoutSeconds + ctx.config.build.timeoutSeconds;
  const queue =
    options.queue ??
    createBuildQueue({
      maxConcurrent: ctx.config.build.maxConcurrent,
      shutdownSignal: ctx.shutdownSignal,
      metrics: ctx.metrics,
    });
  const router = new Router();

  router.post('/build', async (koaCtx) => {
    const request = requestScope(koaCtx);
    const logger = request.logger;
    let plan: BuildPlan;
    try {
      plan = planBuild(await readJsonBody(koaCtx), ctx.config);
    } catch (err) {
      ctx.metrics.countBuild(isServiceError(err) && err.status < 500 ? 'invalid_request' : 'failure');
      if (isServiceError(err)) {
        // Never the body: it may hold credentials. The code, and for a shape check where it failed.
        logger.info(
          { code: err.code, ...(err.code === 'INVALID_FIELDS' ? { invalid: err.details.cause } : {}) },
          'build request refused',
        );
      }
      throw err;
    }

    // The response closing before it was written means the client went away.
    const clientGone = new AbortController();
    const onClose = (): void => {
      if (!koaCtx.res.writableFinished) clientGone.abort(new Cancellation('client_gone'));
    };
    koaCtx.res.once('close', onClose);

    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const jobDeps: BuildDeps = { ...deps, logger };
    const coordinator: Coordinator = {
      queue,
      deps: jobDeps,
      deadlineSeconds,
      remoteTip: (p, signal) => remoteTip(p, jobDeps, signal),
      job: (signal, reuse) =>
        runRecorded(ctx.builds, newBuild(request.id, plan), logger, seconds, (reporter) =>
          runJob(plan, jobDeps, signal, reporter, reuse),
        ),
    };
    const running: Promise<BuildResult> = coordinateBuild(plan, coordinator, clientGone.signal);

    try {
      const result = await running;
      ctx.metrics.countBuild('success', seconds());
      logger.info(
        {
          repository: plan.repository,
          image: result.image,
          commit: result.commit,
          durationMs: Math.round(seconds() * 1000),
        },
        'build succeeded',
      );
      koaCtx.status = 200;
      koaCtx.body = result;
    } catch (err) {
      if (isServiceError(err) && err.code === 'BUSY') {
        ctx.metrics.countBuild('busy');
        const retryAfter = await busyRetryAfter(ctx.builds, logger);
        logger.warn(
          { repository: plan.repository, inFlight: queue.inFlight, retryAfterSeconds: retryAfter },
          'build refused: busy',
        );
        throw busy(queue.capacity, retryAfter);
      }
      const status = failureStatus(err);
      ctx.metrics.countBuild(status, seconds());
      const cancelled = cancellationOf(clientGone.signal.reason);
      if (cancelled !== undefined) {
        logger.warn(
          { repository: plan.repository, durationMs: Math.round(seconds() * 1000) },
          cancelled.message,
        );
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
      throw err;
    } finally {
      koaCtx.res.off('close', onClose);
    }
  });
  return router;
}
