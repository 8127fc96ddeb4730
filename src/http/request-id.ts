/**
 * Request ids: every request carries one, from its `X-Request-Id` header when that is valid
 * (REQUEST_ID_PATTERN, src/rules/limits.ts), otherwise generated. An invalid header is replaced, never refused. The
 * id is echoed on every response, set on the request's trace span, carried by the request's
 * child logger and recorded with the build it starts.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../observability/logger.js';
import { REQUEST_ID_PATTERN } from '../rules/limits.js';

const REQUEST_ID_HEADER = 'X-Request-Id';

const isRequestId = (value: unknown): value is string =>
  typeof value === 'string' && REQUEST_ID_PATTERN.test(value);

/** The caller's id when it is valid (one header, in the pattern), else a new UUID (pure but for the UUID). */
function chooseRequestId(header: string | string[] | undefined): string {
  return isRequestId(header) ? header : randomUUID();
}

/** What every request carries below this middleware. */
export interface RequestScope {
  readonly id: string;
  /** The service logger with `requestId` on every line. */
  readonly logger: Logger;
}

const SCOPE = Symbol('request scope');

/**
 * Koa middleware, mounted first: picks the id, echoes it (set before anything else so every
 * answer, 404/429/5xx included, carries it) and attaches the request's scope.
 */
export function assignRequestIds(logger: Logger): Middleware {
  return async (koaCtx, next) => {
    const id = chooseRequestId(koaCtx.headers['x-request-id']);
    const scope: RequestScope = { id, logger: logger.child({ requestId: id }) };
    (koaCtx.state as Record<symbol, RequestScope>)[SCOPE] = scope;
    koaCtx.set(REQUEST_ID_HEADER, id);
    await next();
  };
}

/** The scope assignRequestIds attached; throws when the middleware is not mounted (a programming error). */
export function requestScope(koaCtx: Pick<Context, 'state'>): RequestScope {
  const scope = (koaCtx.state as Record<symbol, RequestScope | undefined>)[SCOPE];
  if (scope === undefined) throw new Error('assignRequestIds is not mounted');
  return scope;
}

/** The request's id, when assignRequestIds has run (for the trace span). */
export const requestIdOf = (koaCtx: Pick<Context, 'state'>): string | undefined =>
  (koaCtx.state as Record<symbol, RequestScope | undefined>)[SCOPE]?.id;
