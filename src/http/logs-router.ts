/**
 * GET/DELETE /logs/:id. GET answers what is stored so far, `X-Log-Complete` saying whether the
 * command has ended; `?follow=true` streams the log from its start and keeps the response open,
 * sending each new piece as it is stored, until the command ends. A follower that goes away
 * only stops its own stream.
 */
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import { clientGone } from './client-gone.js';
import type { AppContext } from './context.js';
import type { AuthAction } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import { authorize, callerOf, repositoryResource, resourceNames } from './access.js';

type LogsContext = Pick<AppContext, 'logStore' | 'builds' | 'access'>;

/**
 * With identities enforced: `action` on the repository of the build the log belongs to (a log of
 * no kept build: on every repository); a log the caller may not read is answered as unknown.
 */
async function guardLog(ctx: LogsContext, koaCtx: Context, id: string, action: AuthAction): Promise<void> {
  if (!ctx.access.enforced) return;
  const identity = await callerOf(ctx.access, koaCtx, action, { log: id });
  const owner = await ctx.builds.ownerOfLog(id);
  const resources = {
    repository: owner === undefined ? ('anyRepository' as const) : repositoryResource(owner.repository),
  };
  const readable = ctx.access.allows(identity, 'read', resources);
  await authorize(ctx.access, koaCtx, {
    action,
    resources,
    resource: resourceNames(resources, { log: id }),
    ...(readable ? {} : { hidden: () => serviceError('LOG_NOT_FOUND', {}, { logId: id }) }),
  });
}

const LOG_COMPLETE_HEADER = 'X-Log-Complete';

/** `follow` absent, `true` or `false`; nothing else (other parameters are ignored, as they always were). */
function followRequested(follow: string | string[] | undefined): boolean {
  if (follow === undefined || follow === 'false') return false;
  if (follow === 'true') return true;
  throw serviceError('INVALID_FOLLOW');
}

export function createLogsRouter(ctx: LogsContext): Router {
  const router = new Router();
  router.get('/logs/:id', async (koaCtx) => {
    const id = koaCtx.params.id ?? '';
    await guardLog(ctx, koaCtx, id, 'read');
    if (!followRequested(koaCtx.query.follow)) {
      const snapshot = await ctx.logStore.read(id);
      koaCtx.set(LOG_COMPLETE_HEADER, String(snapshot.complete));
      koaCtx.body = snapshot.text;
      koaCtx.type = 'text/plain; charset=utf-8';
      return;
    }
    // Stops this follower (and only it) when its client goes away.
    const gone = clientGone(koaCtx);
    const stream = await ctx.logStore.follow(id, gone.signal);
    koaCtx.set('Cache-Control', 'no-store');
    // A front that buffers answers (nginx, ingress-nginx) passes each piece on as it comes.
    koaCtx.set('X-Accel-Buffering', 'no');
    koaCtx.type = 'text/plain; charset=utf-8';
    // No length: the answer is chunked, each stored piece written as it comes.
    koaCtx.body = Readable.from(stream, { objectMode: false });
  });
  router.delete('/logs/:id', async (koaCtx) => {
    await guardLog(ctx, koaCtx, koaCtx.params.id ?? '', 'delete');
    await ctx.logStore.remove(koaCtx.params.id ?? '');
    koaCtx.status = 204;
  });
  return router;
}
