import Koa from 'koa';
import type { AppContext } from './context.js';
import {
  CommandFailedError,
  serviceError,
  InternalError,
  isServiceError,
  type ServiceError,
  StepFailedError,
} from '../errors/errors.js';
import { createAuthRouter } from './auth-router.js';
import { createBuildRouter } from './build-router.js';
import { createBuildsRouter } from './builds-router.js';
import { bodyError } from './json-body.js';
import { createHooksRouter } from './hooks-router.js';
import { createEventsRouter } from './events-router.js';
import { createLogsRouter } from './logs-router.js';
import { createOpsRouter } from './ops-router.js';
import { createRegistryRouter } from './registry-router.js';
import { createRetentionRouter } from './retention-router.js';
import { createUsageRouter } from './usage-router.js';
import { assignRequestIds, requestIdOf, requestScope, type RequestScope } from './request-id.js';
import { traceRequests } from '../observability/tracing.js';
import { createUiRouter } from '../ui/router.js';

/** Maps anything thrown below the routers to a ServiceError (framework client errors stay 4xx). */
function toServiceError(err: unknown): ServiceError {
  if (isServiceError(err)) return err;
  const parseError = bodyError(err);
  if (parseError) return parseError;
  const e = err as { status?: unknown; message?: unknown };
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    // Other framework client errors (unsupported charset, aborted request...) stay client errors.
    return serviceError('UNREADABLE_REQUEST', {
      reason: typeof e.message === 'string' ? e.message : 'bad request',
    });
  }
  return serviceError('INTERNAL', {}, { cause: err });
}

/** Answers `err` (status, body, headers); a 5xx is logged when it is ours and always reported. */
function answerError(ctx: AppContext, koaCtx: Koa.Context, scope: RequestScope, err: unknown): void {
  const { id: requestId, logger } = scope;
  const error = toServiceError(err);
  koaCtx.status = error.status;
  koaCtx.body = error.toBody();
  for (const [name, value] of Object.entries(error.details.headers ?? {})) koaCtx.set(name, value);
  // A failed command or registry is the outside world's doing; anything else is ours to look at.
  if (error.status >= 500 && !(error instanceof CommandFailedError) && error.status !== 502) {
    logger.error({ err: error.cause ?? error, path: koaCtx.path }, 'request failed');
  }
  if (error.status >= 500) {
    ctx.errorTracker.captureException(
      error instanceof InternalError || error instanceof StepFailedError ? (error.cause ?? error) : error,
      {
        code: error.code,
        method: koaCtx.method,
        route: koaCtx.path,
        requestId,
      },
    );
  }
}

/** The one error middleware: every error becomes its answer; every request gets its log line. */
function answerErrors(ctx: AppContext): Koa.Middleware {
  return async (koaCtx, next) => {
    const started = performance.now();
    const scope = requestScope(koaCtx);
    try {
      await next();
      if (koaCtx.status === 404 && koaCtx.body === undefined) throw serviceError('NOT_FOUND');
    } catch (err) {
      answerError(ctx, koaCtx, scope, err);
    } finally {
      scope.logger.info(
        {
          req: { method: koaCtx.method, path: koaCtx.path },
          res: { status: koaCtx.status },
          durationMs: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  };
}

/**
 * Errors Koa meets after the answer started (a streamed body): a client that went away
 * mid-stream (a log follower leaving) is normal; anything else is logged.
 */
function logResponseErrors(ctx: AppContext): (err: unknown) => void {
  return (err) => {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE') return;
    ctx.logger.error({ err }, 'response failed');
  };
}

/** Builds the Koa application; it never listens (src/service.ts or a test does). */
export function createApp(ctx: AppContext): Koa {
  const app = new Koa();
  app.proxy = false;
  // Outermost: every later middleware (the request log line included) runs inside the request span.
  app.use(traceRequests({ requestId: requestIdOf }));
  // Next: the request id is echoed on every answer and carried by the request's logger.
  app.use(assignRequestIds(ctx.logger));
  app.use(answerErrors(ctx));
  app.on('error', logResponseErrors(ctx));

  for (const router of [
    createOpsRouter(ctx),
    createBuildRouter(ctx),
    createBuildsRouter(ctx),
    createRegistryRouter(ctx),
    createLogsRouter(ctx),
    ...(ctx.retention === undefined ? [] : [createRetentionRouter(ctx.retention, ctx.access)]),
    createHooksRouter(ctx),
    createEventsRouter(ctx),
    ...[createAuthRouter(ctx)].filter((router) => router !== undefined),
    ...(ctx.usage === undefined ? [] : [createUsageRouter({ access: ctx.access, usage: ctx.usage })]),
  ]) {
    // No allowedMethods(): a wrong method on a known path is a 404 like any unknown route.
    app.use(router.routes());
  }
  app.use(createUiRouter());
  return app;
}
