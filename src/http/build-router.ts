/**
 * POST /build, a thin adapter: caller -> body -> plan (every 400, no I/O) -> access to the
 * repository and image target -> the build worker -> answer.
 * Synchronous by default: the answer is the worker's BuildResult or its error, and a client that
 * goes away before the answer aborts its submission (the build is cancelled with its last waiter).
 * With `Prefer: respond-async` (RFC 7240): 202, the build's record and its Location, at once.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from './context.js';
import { InvalidFieldsError, isServiceError } from '../errors/errors.js';
import { clientGone } from './client-gone.js';
import type { Logger } from '../observability/logger.js';
import { planBuild } from '../../workers/plan/plan.js';
import type { BuildPlan } from '../../workers/plan/plan-types.js';
import { parseBuildRequest } from './build-schema.js';
import { readJsonBody } from './json-body.js';
import { requestScope } from './request-id.js';
import { bodyDigest, idempotencyKeyOf } from './idempotency-key.js';
import type { BuildRecord } from '../builds/types.js';
import type { Idempotency } from '../../workers/build-worker.js';
import { repositoryPathOf } from '../rules/repository-parts.js';
import { authorize, callerOf, resourceNames } from './access.js';
import type { Resources } from '../auth/rules.js';

/** What the build router uses of the application. */
export type BuildRouterContext = Pick<AppContext, 'config' | 'metrics' | 'buildWorker' | 'access'>;

/** What a build touches: its repository, and its image target once derived. */
const buildResources = (plan: BuildPlan): Resources => ({
  repository: { host: plan.url.host, path: repositoryPathOf(plan.url.path) },
  image: { registry: plan.image.registry, name: plan.image.name },
});

/** The plan of a request's body; a refusal is counted and logged by its code, never with the body. */
async function planOf(koaCtx: Context, ctx: BuildRouterContext, logger: Logger): Promise<BuildPlan> {
  try {
    return planBuild(parseBuildRequest(await readJsonBody(koaCtx)), ctx.config);
  } catch (err) {
    ctx.buildWorker.refused(err);
    if (isServiceError(err)) {
      // Never the body: it may hold credentials. The code, and for a shape check where it failed.
      logger.info(
        { code: err.code, ...(err instanceof InvalidFieldsError ? { invalid: err.details.cause } : {}) },
        'build request refused',
      );
    }
    throw err;
  }
}

/** Whether the request prefers an asynchronous answer (RFC 7240 `respond-async`). */
function prefersAsync(koaCtx: Context): boolean {
  const prefer = koaCtx.get('Prefer');
  return prefer
    .split(',')
    .some((preference) => preference.split(';')[0]?.trim().toLowerCase() === 'respond-async');
}

/** The 202 of an async request: the build's record and where to read it. */
function accepted(koaCtx: Context, record: BuildRecord): void {
  koaCtx.status = 202;
  koaCtx.set('Location', `/builds/${record.id}`);
  koaCtx.set('Preference-Applied', 'respond-async');
  koaCtx.set('Cache-Control', 'no-store');
  koaCtx.body = record;
}

/** The request's Idempotency-Key; a bad key is refused (400) and counted like any refusal. */
function keyOf(koaCtx: Context, ctx: BuildRouterContext, logger: Logger): string | undefined {
  try {
    return idempotencyKeyOf(koaCtx);
  } catch (err) {
    ctx.buildWorker.refused(err);
    if (isServiceError(err)) logger.info({ code: err.code }, 'build request refused');
    throw err;
  }
}

export function createBuildRouter(ctx: BuildRouterContext): Router {
  const router = new Router();
  router.post('/build', async (koaCtx) => {
    const request = requestScope(koaCtx);
    const caller = await callerOf(ctx.access, koaCtx, 'build');
    const key = keyOf(koaCtx, ctx, request.logger);
    const plan = await planOf(koaCtx, ctx, request.logger);
    const resources = buildResources(plan);
    const { tenant } = await authorize(ctx.access, koaCtx, {
      action: 'build',
      resources,
      resource: resourceNames(resources),
    });
    const idempotency: Idempotency | undefined =
      key === undefined ? undefined : { key, digest: bodyDigest(koaCtx) };
    const attachment = idempotency === undefined ? undefined : await ctx.buildWorker.attach(idempotency);
    const attachedTo =
      attachment !== undefined && 'attachedTo' in attachment ? attachment.attachedTo : undefined;
    const options = {
      requestId: request.id,
      logger: request.logger,
      ...(attachment !== undefined && 'held' in attachment ? { idempotency: attachment.held } : {}),
      ...(ctx.access.enforced ? { requestedBy: caller.requestedBy } : {}),
      ...(tenant === undefined ? {} : { tenant }),
    };
    if (prefersAsync(koaCtx)) {
      accepted(
        koaCtx,
        attachedTo === undefined
          ? await ctx.buildWorker.start(plan, options)
          : await ctx.buildWorker.attached(attachedTo),
      );
      return;
    }
    if (attachedTo !== undefined) {
      const gone = clientGone(koaCtx);
      try {
        const answer = await ctx.buildWorker.answerOf(attachedTo, gone.signal);
        koaCtx.status = answer.status;
        koaCtx.body = answer.body;
      } finally {
        gone.detach();
      }
      return;
    }
    const gone = clientGone(koaCtx);
    try {
      koaCtx.body = await ctx.buildWorker.submit(plan, { ...options, signal: gone.signal });
      koaCtx.status = 200;
    } finally {
      gone.detach();
    }
  });
  return router;
}
