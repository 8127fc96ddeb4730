/**
 * The Idempotency-Key of POST /build (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible
 * ASCII characters, given once; and the digest of the request body it is bound to. Only the
 * digest is ever kept: a body can hold credentials.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { serviceError } from '../errors/errors.js';

const IDEMPOTENCY_KEY_MAX = 255;
const KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX}}$`);

/** The request's key, undefined without the header; a 400 for anything else than one valid key. */
export function idempotencyKeyOf(koaCtx: Context): string | undefined {
  const raw = koaCtx.req.headersDistinct['idempotency-key'];
  if (raw === undefined) return undefined;
  const [key] = raw;
  if (raw.length !== 1 || key === undefined || !KEY_PATTERN.test(key))
    throw serviceError('INVALID_IDEMPOTENCY_KEY', { max: IDEMPOTENCY_KEY_MAX });
  return key;
}

/** The SHA-256 of the body's bytes as read (koa-bodyparser's rawBody), hex. */
export function bodyDigest(koaCtx: Context): string {
  const raw = (koaCtx.request as { rawBody?: unknown }).rawBody;
  return createHash('sha256')
    .update(typeof raw === 'string' ? raw : '')
    .digest('hex');
}
