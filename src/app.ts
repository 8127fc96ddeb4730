import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import type { AppContext } from './context.js';
import { bodyTooLarge, internal, invalidJson, isServiceError, notFound, ServiceError } from './errors.js';
import { createBuildRouter } from './http/build-router.js';
import { createLogsRouter } from './http/logs-router.js';
import { createOpsRouter } from './http/ops-router.js';
import { createRegistryRouter } from './http/registry-router.js';
import { traceRequests } from './observability/tracing.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Maps anything thrown below the routers to a ServiceError (framework client errors stay 4xx). */
function toServiceError(err: unknown): ServiceError {
  if (isServiceError(err)) return err;
  const e = err as { status?: unknown; type?: unknown; expose?: unknown; message?: unknown };
  const status = typeof e.status === 'number' ? e.status : 500;
  if (status === 413 || e.type === 'entity.too.large') return bodyTooLarge(BODY_LIMIT_BYTES);
  // co-body throws the JSON.parse SyntaxError with status 400.
  if (e.type === 'entity.parse.failed' || (err instanceof SyntaxError && status === 400))
    return invalidJson();
  if (status >= 400 && status < 500) {
    // Other framework client errors (unsupported charset, aborted request...): keep the 4xx.
    const se = new ServiceError('INVALID_FIELDS', typeof e.message === 'string' ? e.message : 'bad request');
    return Object.assign(se, { status });
  }
  return internal(err);
}

/** Builds the Koa application; it never listens (main.ts or a test does). */
export function createApp(ctx: AppContext): Koa {
  const app = new Koa();
  app.proxy = false;
  // Outermost: every later middleware (the request log line included) runs inside the request span.
  app.use(traceRequests());

  app.use(async (koaCtx, next) => {
    const started = performance.now();
    try {
      await next();
      if (koaCtx.status === 404 && koaCtx.body === undefined) throw notFound();
    } catch (err) {
      const error = toServiceError(err);
      koaCtx.status = error.status;
      koaCtx.body = error.toBody();
      for (const [name, value] of Object.entries(error.details.headers ?? {})) koaCtx.set(name, value);
      if (error.status >= 500 && error.code !== 'COMMAND_FAILED' && error.code !== 'REGISTRY_FAILED') {
        ctx.logger.error({ err: error.cause ?? error, path: koaCtx.path }, 'request failed');
      }
      if (error.status >= 500) {
        ctx.errorTracker.captureException(error.code === 'INTERNAL' ? (error.cause ?? error) : error, {
          code: error.code,
          method: koaCtx.method,
          route: koaCtx.path,
        });
      }
    } finally {
      ctx.logger.info(
        {
          req: { method: koaCtx.method, path: koaCtx.path },
          res: { status: koaCtx.status },
          durationMs: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  });

  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: `${BODY_LIMIT_BYTES}b`,
      strict: false,
      // Any POST body is JSON, whatever its content type says.
      detectJSON: (koaCtx) => koaCtx.method === 'POST',
    }),
  );

  for (const router of [
    createOpsRouter(ctx),
    createBuildRouter(ctx),
    createRegistryRouter(ctx),
    createLogsRouter(ctx),
  ]) {
    // No allowedMethods(): a wrong method on a known path is a 404 like any unknown route.
    app.use(router.routes());
  }
  return app;
}
