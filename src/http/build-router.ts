/**
 * POST /build, a thin adapter: body -> plan (every 400, no I/O) -> the build worker -> answer.
 * Synchronous by default: the answer is the worker's BuildResult or its error, and a client that
 * goes away before the answer aborts its submission (the build is cancelled with its last waiter).
 * With `Prefer: respond-async` (RFC 7240): 202, the build's record and its Location, at once.
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

/** Whether the request prefers an asynchronous answer (RFC 7240 `respond-async`). */
function prefersAsync(koaCtx: Context): boolean {
  const prefer = koaCtx.get('Prefer');
  return prefer
    .split(',')
    .some((preference) => preference.split(';')[0]?.trim().toLowerCase() === 'respond-async');
}

export function createBuildRouter(ctx: BuildRouterContext): Router {
  const router = new Router();
  router.post('/build', async (koaCtx) => {
    const request = requestScope(koaCtx);
    const plan = await planOf(koaCtx, ctx, request.logger, ctx.metrics);
    if (prefersAsync(koaCtx)) {
      const record = await ctx.buildWorker.start(plan, { requestId: request.id, logger: request.logger });
      koaCtx.status = 202;
      koaCtx.set('Location', `/builds/${record.id}`);
      koaCtx.set('Preference-Applied', 'respond-async');
      koaCtx.set('Cache-Control', 'no-store');
      koaCtx.body = record;
      return;
    }
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
