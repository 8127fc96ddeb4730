import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { notImplemented } from '../errors.js';

/** POST /build (stub until the build pipeline lands). */
export function createBuildRouter(_ctx: AppContext): Router {
  const router = new Router();
  router.post('/build', () => {
    throw notImplemented('POST /build');
  });
  return router;
}
