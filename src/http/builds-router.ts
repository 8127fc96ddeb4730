/**
 * GET /builds: the running builds and the newest finished ones, newest first, filtered by query.
 * GET /builds/{id} (with `wait`, a long poll) and DELETE /builds/{id}: one build as a resource.
 */
import Router from '@koa/router';
import type { AppContext } from './context.js';
import { parseBuildsQuery, parseWait } from './builds-query.js';
import { serviceError } from '../errors/errors.js';
import { requestScope } from './request-id.js';

export function createBuildsRouter(ctx: Pick<AppContext, 'builds' | 'buildWorker'>): Router {
  const router = new Router();
  router.get('/builds', async (koaCtx) => {
    const filter = parseBuildsQuery(koaCtx.query);
    koaCtx.set('Cache-Control', 'no-store');
    koaCtx.body = { builds: await ctx.builds.list(filter) };
  });
  router.get('/builds/:id', async (koaCtx) => {
    const { id } = koaCtx.params as { id: string };
    const wait = parseWait(koaCtx.query);
    // A long poll ends early when its client goes away.
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    koaCtx.res.once('close', onClose);
    try {
      const record =
        wait === undefined
          ? await ctx.builds.get(id)
          : await ctx.builds.waitFinished(id, wait * 1000, gone.signal);
      if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
      koaCtx.set('Cache-Control', 'no-store');
      koaCtx.body = record;
    } finally {
      koaCtx.res.off('close', onClose);
    }
  });
  router.delete('/builds/:id', async (koaCtx) => {
    const { id } = koaCtx.params as { id: string };
    const request = requestScope(koaCtx);
    const record = await ctx.buildWorker.cancel(id, `DELETE /builds/${id} (request ${request.id})`);
    request.logger.info({ buildId: id }, 'build cancel asked');
    koaCtx.status = 202;
    koaCtx.body = record;
  });
  return router;
}
