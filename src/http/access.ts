/**
 * The routes' one way to ask for access (docs/auth.md): the caller identified once per request
 * from its Authorization header, then the action decided on what the route touches. With
 * identities off both are no-ops and every caller is anonymous.
 */
import type { Context } from 'koa';
import type { AccessAsk, AccessControl, AccessRequest } from '../auth/access.js';
import type { Identity } from '../auth/identity.js';
import { CSRF_HEADER } from '../auth/session-cookies.js';
import { ruleTenant, type RepositoryResource, type Resources } from '../auth/rules.js';
import type { AuthAction } from '../config/types.js';
import { repositoryParts, repositoryPathOf } from '../rules/repository-parts.js';
import { requestScope } from './request-id.js';

export function accessRequest(koaCtx: Context): AccessRequest {
  const scope = requestScope(koaCtx);
  return {
    authorization: koaCtx.get('authorization') || undefined,
    cookie: koaCtx.get('cookie') || undefined,
    method: koaCtx.method,
    csrfToken: koaCtx.get(CSRF_HEADER) || undefined,
    origin: koaCtx.get('origin') || undefined,
    requestId: scope.id,
    logger: scope.logger,
  };
}

/** The request's caller, identified on the first ask (401 or 503 when it cannot be). */
export async function callerOf(
  access: AccessControl,
  koaCtx: Context,
  action: AuthAction,
  resource: AccessAsk['resource'] = {},
): Promise<Identity> {
  const state = koaCtx.state as { identity?: Identity };
  state.identity ??= await access.identify(accessRequest(koaCtx), action, resource);
  return state.identity;
}

/**
 * The caller, once `ask` is granted to it (401, 403, or the ask's own 404 otherwise), and the
 * tenant its rule names for the builds it admits, if any.
 */
export async function authorize(
  access: AccessControl,
  koaCtx: Context,
  ask: AccessAsk,
): Promise<{ identity: Identity; tenant?: string }> {
  const identity = await callerOf(access, koaCtx, ask.action, ask.resource);
  const tenant = ruleTenant(await access.authorize(accessRequest(koaCtx), identity, ask), identity);
  return { identity, ...(tenant === undefined ? {} : { tenant }) };
}

/** The caller, once `admin` is granted to it: the route's own path names what it touches. */
export const authorizeAdmin = async (access: AccessControl, koaCtx: Context): Promise<void> => {
  await authorize(access, koaCtx, { action: 'admin', resources: {}, resource: { path: koaCtx.path } });
};

/** A repository URL as rules see it; a text that is no URL is of no known repository. */
export function repositoryResource(repository: string): RepositoryResource | 'anyRepository' {
  const parts = repositoryParts(repository);
  return parts === undefined ? 'anyRepository' : { host: parts.host, path: repositoryPathOf(parts.path) };
}

/** The names of the resources, as the audit trail keeps them. */
export function resourceNames(
  resources: Resources,
  extra: Record<string, string> = {},
): Record<string, string> {
  const { repository, image } = resources;
  return {
    ...(repository === undefined
      ? {}
      : { repository: repository === 'anyRepository' ? '*' : `${repository.host}/${repository.path}` }),
    ...(image === undefined ? {} : { image: `${image.registry}/${image.name}` }),
    ...extra,
  };
}
