/**
 * POST /hooks/github|gitlab|gitea and GET /hooks/deliveries (docs/prebuilds.md): the body read
 * raw (up to 25 MiB, on these routes only), its signature checked before anything else, then the
 * push handed to the prebuilds, which only select among the configured repositories and branches.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { serviceError } from '../errors/errors.js';
import { type Forge, isForge } from '../rules/forges.js';
import { HOOK_BODY_LIMIT_BYTES } from '../rules/limits.js';
import type { AppContext } from './context.js';
import { readHookDelivery } from './hook-payload.js';
import { validHookSignature } from './hook-signature.js';
import { requestScope } from './request-id.js';
import { authorizeAdmin } from './access.js';

/** The raw body, refused past the limit (413) without reading it whole. */
async function rawBody(koaCtx: Context): Promise<Buffer> {
  const declared = Number(koaCtx.get('content-length') || '0');
  if (declared > HOOK_BODY_LIMIT_BYTES)
    throw serviceError('HOOK_BODY_TOO_LARGE', { limit: HOOK_BODY_LIMIT_BYTES });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of koaCtx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > HOOK_BODY_LIMIT_BYTES)
      throw serviceError('HOOK_BODY_TOO_LARGE', { limit: HOOK_BODY_LIMIT_BYTES });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function receive(ctx: AppContext, koaCtx: Context, forge: Forge): Promise<void> {
  const secret = ctx.config.prebuilds.hookSecrets[forge];
  const prebuilds = ctx.prebuilds;
  if (secret === undefined || prebuilds === undefined) throw serviceError('HOOK_NOT_CONFIGURED', { forge });
  const body = await rawBody(koaCtx);
  const header = (name: string): string | undefined => koaCtx.get(name) || undefined;
  if (!validHookSignature(forge, secret, body, header)) {
    await prebuilds.refuse(forge, 'refused: bad signature');
    throw serviceError('HOOK_SIGNATURE_INVALID');
  }
  const delivery = readHookDelivery(forge, body, header);
  if (delivery.kind === 'ping') {
    koaCtx.body = { status: 'ok', event: 'ping' };
    return;
  }
  const taken = await prebuilds.push(delivery.event, requestScope(koaCtx).logger);
  koaCtx.status = taken.decision === 'built' ? 202 : 200;
  koaCtx.body = taken;
}

export function createHooksRouter(ctx: AppContext): Router {
  const router = new Router();
  router.post('/hooks/:forge', async (koaCtx) => {
    const forge = koaCtx.params.forge ?? '';
    if (!isForge(forge)) throw serviceError('NOT_FOUND');
    await receive(ctx, koaCtx, forge);
  });
  router.get('/hooks/deliveries', async (koaCtx) => {
    await authorizeAdmin(ctx.access, koaCtx);
    koaCtx.body = { deliveries: (await ctx.prebuilds?.deliveries()) ?? [] };
  });
  return router;
}
