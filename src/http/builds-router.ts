/**
 * GET /builds: a page of the running builds and the kept finished ones, newest first, filtered by
 * query; GET /builds/events: their changes as they happen (build-changes.ts).
 * GET /builds/{id} (with `wait`, a long poll) and DELETE /builds/{id}: one build as a resource.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Identity } from '../auth/identity.js';
import { clientGone } from './client-gone.js';
import type { AuthAction } from '../config/types.js';
import type { BuildRecord } from '../builds/types.js';
import type { AppContext } from './context.js';
import { authorize, callerOf, repositoryResource, resourceNames } from './access.js';
import { streamChanges } from './build-changes.js';
import { parseBuildsPage, parseBuildsQuery, parseWait } from './builds-query.js';
import { serviceError } from '../errors/errors.js';
import { requestScope } from './request-id.js';

type BuildsContext = Pick<AppContext, 'builds' | 'buildWorker' | 'access'>;

/**
 * What a caller may read, decided once per repository of the request (a page's records share few):
 * O(rules) per repository, not per record examined.
 */
function visibility(ctx: BuildsContext, caller: Identity): (record: BuildRecord) => boolean {
  const decided = new Map<string, boolean>();
  return (record) => {
    let readable = decided.get(record.repository);
    if (readable === undefined) {
      readable = ctx.access.allows(caller, 'read', { repository: repositoryResource(record.repository) });
      decided.set(record.repository, readable);
    }
    return readable;
  };
}

/**
 * Queued records with their place in the queue (docs/queue.md): one read of the queue for the
 * page, O(tenants + queued records), made only when the page holds a queued build.
 */
async function withPlaces(ctx: BuildsContext, records: BuildRecord[]): Promise<BuildRecord[]> {
  const queued = records.filter((r) => r.phase === 'queued').map((r) => r.id);
  if (queued.length === 0 || ctx.buildWorker.queuePositions === undefined) return records;
  const places = await ctx.buildWorker.queuePositions(queued);
  return records.map((record) => {
    const place = record.phase === 'queued' ? places.get(record.id) : undefined;
    return place === undefined ? record : { ...record, queue: place };
  });
}

/**
 * With identities enforced: the build `id` once `action` on its repository is granted; a build the
 * caller may not read is answered as unknown (its existence is not told).
 */
async function guardBuild(
  ctx: BuildsContext,
  koaCtx: Context,
  id: string,
  action: AuthAction,
): Promise<void> {
  if (!ctx.access.enforced) return;
  await callerOf(ctx.access, koaCtx, action, { build: id });
  const record = await ctx.builds.get(id);
  if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
  const resources = { repository: repositoryResource(record.repository) };
  const identity = await callerOf(ctx.access, koaCtx, action);
  const readable = ctx.access.allows(identity, 'read', resources);
  await authorize(ctx.access, koaCtx, {
    action,
    resources,
    resource: resourceNames(resources, { build: id }),
    // A read of a build the caller may not read is not told it exists (404); a cancel the rules
    // refuse is told so (403): the caller holds the id already, and ids are not guessable.
    ...(readable || action !== 'read' ? {} : { hidden: () => serviceError('BUILD_NOT_FOUND', { id }) }),
  });
}

export function createBuildsRouter(ctx: BuildsContext): Router {
  const router = new Router();
  router.get('/builds', async (koaCtx) => {
    const caller = await callerOf(ctx.access, koaCtx, 'read');
    const filter = parseBuildsQuery(koaCtx.query);
    const page = parseBuildsPage(koaCtx.query);
    // The caller's visibility fills the page: a build it may not read is passed over, never counted.
    const visible = ctx.access.enforced ? visibility(ctx, caller) : undefined;
    const { builds, next } = await ctx.builds.list(filter, { ...page, ...(visible ? { visible } : {}) });
    koaCtx.set('Cache-Control', 'no-store');
    koaCtx.body = { builds: await withPlaces(ctx, builds), ...(next === undefined ? {} : { next }) };
  });
  router.get('/builds/events', async (koaCtx) => {
    const caller = await callerOf(ctx.access, koaCtx, 'read');
    const readable = (repository: string): boolean =>
      ctx.access.allows(caller, 'read', { repository: repositoryResource(repository) });
    await streamChanges(ctx.builds, koaCtx, readable);
  });
  router.get('/builds/:id', async (koaCtx) => {
    const { id } = koaCtx.params as { id: string };
    const wait = parseWait(koaCtx.query);
    await guardBuild(ctx, koaCtx, id, 'read');
    // A long poll ends early when its client goes away.
    const gone = clientGone(koaCtx);
    try {
      const record =
        wait === undefined
          ? await ctx.builds.get(id)
          : await ctx.builds.waitFinished(id, wait * 1000, gone.signal);
      if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
      koaCtx.set('Cache-Control', 'no-store');
      koaCtx.body = (await withPlaces(ctx, [record]))[0];
    } finally {
      gone.detach();
    }
  });
  router.delete('/builds/:id', async (koaCtx) => {
    const { id } = koaCtx.params as { id: string };
    const request = requestScope(koaCtx);
    await guardBuild(ctx, koaCtx, id, 'cancel');
    const record = await ctx.buildWorker.cancel(id, `DELETE /builds/${id} (request ${request.id})`);
    request.logger.info({ buildId: id }, 'build cancel asked');
    koaCtx.status = 202;
    koaCtx.body = record;
  });
  return router;
}
