import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { notImplemented } from '../errors.js';

/** GET/DELETE /image and GET /devcontainer (stub until the registry client lands). */
export function createRegistryRouter(_ctx: AppContext): Router {
  const router = new Router();
  router.get('/image', () => {
    throw notImplemented('GET /image');
  });
  router.delete('/image', () => {
    throw notImplemented('DELETE /image');
  });
  router.get('/devcontainer', () => {
    throw notImplemented('GET /devcontainer');
  });
  return router;
}
