import Router from '@koa/router';
import { effectiveConfigView } from '../config/view.js';
import type { AppContext } from '../context.js';

/** Probes, metrics and the effective configuration view. */
export function createOpsRouter(ctx: AppContext): Router {
  const router = new Router();
  const builderConfigured = ctx.config.builderEndpoints.length > 0;
  ctx.metrics.buildsCapacity.set(ctx.config.build.maxConcurrent);

  router.get('/health/startup', (koaCtx) => {
    koaCtx.body = { status: 'started' };
  });
  router.get('/health/live', (koaCtx) => {
    koaCtx.body = { status: 'ok' };
  });
  router.get('/health/ready', async (koaCtx) => {
    if (!builderConfigured) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'no builder endpoint configured' };
    } else if (ctx.sharedStoreProbe !== undefined && !(await ctx.sharedStoreProbe())) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'the shared store (Redis) is unavailable' };
    } else {
      koaCtx.body = { status: 'ready' };
    }
  });
  router.get('/metrics', async (koaCtx) => {
    koaCtx.body = await ctx.metrics.registry.metrics();
    koaCtx.type = ctx.metrics.registry.contentType;
  });
  router.get('/config', (koaCtx) => {
    koaCtx.body = effectiveConfigView(ctx.config);
  });
  return router;
}
