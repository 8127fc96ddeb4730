/** GET /builds: the running builds and the newest finished ones, newest first, filtered by query. */
import Router from '@koa/router';
import type { AppContext } from './context.js';
import { parseBuildsQuery } from './builds-query.js';

export function createBuildsRouter(ctx: Pick<AppContext, 'builds'>): Router {
  const router = new Router();
  router.get('/builds', async (koaCtx) => {
    const filter = parseBuildsQuery(koaCtx.query);
    koaCtx.set('Cache-Control', 'no-store');
    koaCtx.body = { builds: await ctx.builds.list(filter) };
  });
  return router;
}
