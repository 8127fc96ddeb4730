/**
 * POST /build: plan (every 400, no I/O) -> admit to the queue (or 429) -> await the job.
 * The request stays synchronous: the answer is the job's BuildResult or its error.
 * Metrics: every attempt is counted in service_builds_total{status}; admitted jobs (real
 * builds) are timed in service_build_duration_seconds{status}.
 */
import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { isServiceError } from '../errors.js';
import type { BuildStatus } from '../observability/metrics.js';
import { runBuildJob } from '../../workers/build-job.js';
import { planBuild } from '../../workers/plan.js';
import { readJsonBody } from './json-body.js';
import type { BuildPlan, BuildResult } from '../../workers/plan-types.js';
import { createBuildQueue, type BuildQueue } from '../../workers/queue.js';

export type BuildJobRunner = (plan: BuildPlan, ctx: AppContext, signal: AbortSignal) => Promise<BuildResult>;

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

export function createBuildRouter(ctx: AppContext, options: BuildRouterOptions = {}): Router {
  const runJob = options.runJob ?? runBuildJob;
  const queue =
    options.queue ??
    createBuildQueue({
      maxConcurrent: ctx.config.build.maxConcurrent,
      shutdownSignal: ctx.shutdownSignal,
      metrics: ctx.metrics,
    });
  const router = new Router();

  router.post('/build', async (koaCtx) => {
    let plan: BuildPlan;
    try {
      plan = planBuild(await readJsonBody(koaCtx), ctx.config);
    } catch (err) {
      ctx.metrics.countBuild(isServiceError(err) && err.status < 500 ? 'invalid_request' : 'failure');
      if (isServiceError(err)) {
        // Never the body: it may hold credentials. The code, and for a shape check where it failed.
        ctx.logger.info(
          { code: err.code, ...(err.code === 'INVALID_FIELDS' ? { invalid: err.details.cause } : {}) },
          'build request refused',
        );
      }
      throw err;
    }

    let running: Promise<BuildResult>;
    try {
      running = queue.run((signal) => runJob(plan, ctx, signal));
    } catch (err) {
      ctx.metrics.countBuild('busy');
      ctx.logger.warn({ repository: plan.repository, inFlight: queue.inFlight }, 'build refused: busy');
      throw err;
    }

    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await running;
      ctx.metrics.countBuild('success', seconds());
      ctx.logger.info(
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
      const status = failureStatus(err);
      ctx.metrics.countBuild(status, seconds());
      ctx.logger.info(
        {
          repository: plan.repository,
          status,
          code: isServiceError(err) ? err.code : 'INTERNAL',
          ...(isServiceError(err) && err.details.logId !== undefined ? { logId: err.details.logId } : {}),
        },
        'build failed',
      );
      throw err;
    }
  });
  return router;
}
