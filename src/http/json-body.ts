import type { Context } from 'koa';
import bodyParser from 'koa-bodyparser';
import { serviceError, isServiceError, type ServiceError } from '../errors/errors.js';
import { BODY_LIMIT_BYTES } from '../rules/limits.js';

const parser = bodyParser({
  enableTypes: ['json'],
  jsonLimit: `${BODY_LIMIT_BYTES}b`,
  // Any JSON value is parsed; the route's schema refuses what is not an object.
  strict: false,
  // The body is JSON whatever its content type says.
  detectJSON: () => true,
});

/** Maps the parser's failures to the errors of docs/errors.md (400 invalid JSON body, 413 too large). */
export function bodyError(err: unknown): ServiceError | undefined {
  if (isServiceError(err)) return err;
  const e = err as { status?: unknown; type?: unknown };
  if (e.status === 413 || e.type === 'entity.too.large')
    return serviceError('BODY_TOO_LARGE', { limit: BODY_LIMIT_BYTES });
  // co-body rethrows JSON.parse's SyntaxError with status 400.
  if (e.type === 'entity.parse.failed' || (err instanceof SyntaxError && e.status === 400))
    return serviceError('INVALID_JSON');
  return undefined;
}

/** Reads the request body as JSON (at most 1 MiB); throws ServiceError INVALID_JSON or BODY_TOO_LARGE. */
export async function readJsonBody(koaCtx: Context): Promise<unknown> {
  try {
    await parser(koaCtx, async () => undefined);
  } catch (err) {
    throw bodyError(err) ?? err;
  }
  return koaCtx.request.body;
}
