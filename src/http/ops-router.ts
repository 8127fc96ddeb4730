import Router from '@koa/router';
import { builderEndpoints, declaredPlatforms } from '../config/builder-endpoints.js';
import { effectiveConfigView } from '../config/view.js';
import type { AppContext } from './context.js';
import { authorizeAdmin } from './access.js';

/** Each builder's state for the readiness body (docs/fleet.md): endpoints only, never credentials. */
function builderStates(
  ctx: AppContext,
): { builder: string; state: 'up' | 'down'; reason?: string; platforms: string[] }[] {
  const states =
    ctx.buildWorker.builders?.() ?? builderEndpoints(ctx.config).map((endpoint) => ({ endpoint, up: true }));
  return states.map((builderState) => ({
    builder: builderState.endpoint,
    state: builderState.up ? 'up' : 'down',
    ...('reason' in builderState && builderState.reason !== undefined ? { reason: builderState.reason } : {}),
    // Each builder's cache use as BuildKit reports it (read at most once a minute, docs/fleet.md).
    ...('cache' in builderState && builderState.cache !== undefined ? { cache: builderState.cache } : {}),
    platforms: [...declaredPlatforms(ctx.config.builders, builderState.endpoint)],
  }));
}

/** Probes, metrics and the effective configuration view. */
export function createOpsRouter(ctx: AppContext): Router {
  const router = new Router();
  const builderConfigured = ctx.config.builders.length > 0;
  ctx.metrics.buildsCapacity.set(ctx.config.build.maxConcurrent);

  router.get('/health/startup', (koaCtx) => {
    koaCtx.body = { status: 'started' };
  });
  router.get('/health/live', (koaCtx) => {
    koaCtx.body = { status: 'ok' };
  });
  router.get('/health/ready', async (koaCtx) => {
    const builders = builderStates(ctx);
    if (ctx.shuttingDown?.() === true) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'shutting down' };
    } else if (!builderConfigured) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'no builder endpoint configured' };
    } else if (!builders.some((b) => b.state === 'up')) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'no builder answers', builders };
    } else if (ctx.sharedStoreProbe !== undefined && !(await ctx.sharedStoreProbe())) {
      koaCtx.status = 503;
      koaCtx.body = { status: 'not ready', reason: 'the shared store (Redis) is unavailable', builders };
    } else {
      koaCtx.body = { status: 'ready', builders };
    }
  });
  router.get('/metrics', async (koaCtx) => {
    koaCtx.body = await ctx.metrics.registry.metrics();
    koaCtx.type = ctx.metrics.registry.contentType;
  });
  router.get('/config', async (koaCtx) => {
    await authorizeAdmin(ctx.access, koaCtx);
    koaCtx.body = effectiveConfigView(ctx.config);
  });
  return router;
}
