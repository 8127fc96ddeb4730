/**
 * GET /retention/plan (what a run would do now, nothing done) and POST /retention/run (the run,
 * delete mode only; 409 while another run holds the lock). docs/retention.md.
 */
import Router from '@koa/router';
import { serviceError } from '../errors/errors.js';
import type { Retention } from '../retention/retention.js';
import type { AccessControl } from '../auth/access.js';
import { authorizeAdmin } from './access.js';

export function createRetentionRouter(
  retention: Pick<Retention, 'mode' | 'plan' | 'run'>,
  access: AccessControl,
): Router {
  const router = new Router();
  router.get('/retention/plan', async (koaCtx) => {
    await authorizeAdmin(access, koaCtx);
    koaCtx.body = await retention.plan();
  });
  router.post('/retention/run', async (koaCtx) => {
    await authorizeAdmin(access, koaCtx);
    if (retention.mode !== 'delete')
      throw serviceError('RETENTION_NOT_DELETE_MODE', { mode: retention.mode });
    const answer = await retention.run();
    if (answer === undefined) throw serviceError('RETENTION_RUNNING');
    koaCtx.body = answer;
  });
  return router;
}
