/**
 * POST /build, a thin adapter: body -> plan (every 400, no I/O) -> the build worker -> answer.
 * The request stays synchronous: the answer is the worker's BuildResult or its error. A client
 * that goes away before the answer aborts its submission, which cancels the build.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from './context.js';
import { InvalidFieldsError, isServiceError } from '../errors/errors.js';
import { Cancellation } from '../exec/cancellation.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { planBuild } from '../../workers/plan/plan.js';
import type { BuildPlan } from '../../workers/plan/plan-types.js';
import { parseBuildRequest } from './build-schema.js';
import { readJsonBody } from './json-body.js';
import { requestScope } from './request-id.js';

/** What the build router uses of the application. */
export type BuildRouterContext = Pick<AppContext, 'config' | 'metrics' | 'buildWorker'>;

/** The plan of a request's body; a refusal is counted and logged by its code, never with the body. */
async function planOf(
  koaCtx: Context,
  ctx: BuildRouterContext,
  logger: Logger,
  metrics: Metrics,
): Promise<BuildPlan> {
  try {
    return planBuild(parseBuildRequest(await readJsonBody(koaCtx)), ctx.config);
  } catch (err) {
    metrics.countBuild(isServiceError(err) && err.status < 500 ? 'invalid_request' : 'failure');
    if (isServiceError(err)) {
      // Never the body: it may hold credentials. The code, and for a shape check where it failed.
      logger.info(
        { code: err.code, ...(err instanceof InvalidFieldsError ? { invalid: err.details.cause } : {}) },
        'build request refused',
      );
    }
    throw err;
  }
}

export function createBuildRouter(ctx: BuildRouterContext): Router {
  const router = new Router();
  router.post('/build', async (koaCtx) => {
    const request = requestScope(koaCtx);
    const plan = await planOf(koaCtx, ctx, request.logger, ctx.metrics);
    // The response closing before it was written means the client went away.
    const clientGone = new AbortController();
    const onClose = (): void => {
      if (!koaCtx.res.writableFinished) clientGone.abort(new Cancellation('client_gone'));
    };
    koaCtx.res.once('close', onClose);
    try {
      koaCtx.body = await ctx.buildWorker.submit(plan, {
        requestId: request.id,
        logger: request.logger,
        signal: clientGone.signal,
      });
      koaCtx.status = 200;
    } finally {
      koaCtx.res.off('close', onClose);
    }
  });
  return router;
}
