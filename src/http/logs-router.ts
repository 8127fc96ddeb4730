import Router from '@koa/router';
import type { AppContext } from '../context.js';

/** GET/DELETE /logs/:id. */
export function createLogsRouter(ctx: AppContext): Router {
  const router = new Router();
  router.get('/logs/:id', async (koaCtx) => {
    koaCtx.body = await ctx.logStore.read(koaCtx.params.id ?? '');
    koaCtx.type = 'text/plain; charset=utf-8';
  });
  router.delete('/logs/:id', async (koaCtx) => {
    await ctx.logStore.remove(koaCtx.params.id ?? '');
    koaCtx.status = 204;
  });
  return router;
}
