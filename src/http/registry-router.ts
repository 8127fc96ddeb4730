import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from './context.js';
import { describeDevcontainer, METADATA_LABEL, parseMetadataLabel } from '../devcontainer/index.js';
import { ImageNotFoundError, isServiceError, serviceError } from '../errors/errors.js';
import type {
  DevcontainerLookupResult,
  ImageCheckResult,
  ImageDeleteResult,
} from '../observability/metrics.js';
import { imageExists } from '../registry/check.js';
import { DELETE_ACTIONS, PULL, type RegistryCall, RegistryClient } from '../registry/client.js';
import { deleteImage } from '../registry/delete.js';
import { readImageConfig } from '../registry/image-config.js';
import { parsePlatform } from '../registry/platform.js';
import { type OwnCredentials, type RegistryAccess, registryCall } from '../registry/call.js';
import { type ImageQuery, parseDevcontainerQuery, parseImageQuery } from './registry-schemas.js';
import type { AuthAction } from '../config/types.js';
import { authorize, callerOf, resourceNames } from './access.js';
import { servedTag } from '../retention/snapshot-types.js';

const USER_HEADER = 'x-registry-username';
const PASSWORD_HEADER = 'x-registry-password';

/** X-Registry-Username + X-Registry-Password together (for any registry), else none (ambient auth). */
function headerCredentials(koaCtx: Context): OwnCredentials | undefined {
  const value = (name: string): string | undefined => {
    const v = koaCtx.headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    return s === undefined || s === '' ? undefined : s;
  };
  const username = value(USER_HEADER);
  const password = value(PASSWORD_HEADER);
  if (username !== undefined && password !== undefined) return { username, password };
  if (username !== undefined || password !== undefined) {
    throw serviceError('REGISTRY_HEADERS_UNPAIRED');
  }
  return undefined;
}

/** What each route uses: the app's context and the registry access of the service (its one client). */
interface Registry {
  readonly ctx: AppContext;
  readonly client: RegistryClient;
  readonly access: RegistryAccess;
}

/**
 * The image of a query (400 when it is malformed), once `action` on it is granted to the caller
 * (identified before the query is read: 401 comes first).
 */
async function authorizedQuery<Q extends { registry: string; name: string }>(
  { ctx }: Registry,
  koaCtx: Context,
  action: AuthAction,
  parse: (query: unknown) => Q,
): Promise<Q> {
  await callerOf(ctx.access, koaCtx, action);
  const query = parse(koaCtx.query);
  const resources = { image: { registry: query.registry, name: query.name } };
  await authorize(ctx.access, koaCtx, { action, resources, resource: resourceNames(resources) });
  return query;
}

/** The call of a query: its image (a malformed one answers 400 first) with the request's credentials. */
function callFor(
  registry: Registry,
  koaCtx: Context,
  query: ImageQuery,
  actions: readonly string[],
): RegistryCall {
  const call = registryCall(registry.access, query, actions);
  const own = headerCredentials(koaCtx);
  return own === undefined ? call : registryCall({ ...registry.access, own }, query, actions);
}

async function checkImage(registry: Registry, koaCtx: Context): Promise<void> {
  const { ctx, client } = registry;
  let result: ImageCheckResult = 'error';
  try {
    const query = await authorizedQuery(registry, koaCtx, 'read', parseImageQuery);
    const call = callFor(registry, koaCtx, query, PULL);
    const { ref } = call;
    const exists = await imageExists(client, call);
    result = exists ? 'exists' : 'absent';
    if (exists) ctx.retention?.served(ref.target, [servedTag(ref.tag)]);
    koaCtx.body = { image: ref.image, exists };
  } finally {
    ctx.metrics.imageChecksTotal.inc({ result });
  }
}

async function removeImage(registry: Registry, koaCtx: Context): Promise<void> {
  const { ctx, client } = registry;
  let result: ImageDeleteResult = 'error';
  try {
    const query = await authorizedQuery(registry, koaCtx, 'delete', parseImageQuery);
    const call = callFor(registry, koaCtx, query, DELETE_ACTIONS);
    const outcome = await deleteImage(client, call);
    result = outcome.result;
    koaCtx.body = { image: call.ref.image, deleted: outcome.deleted, reason: outcome.reason };
  } finally {
    ctx.metrics.imageDeletesTotal.inc({ result });
  }
}

async function lookupDevcontainer(registry: Registry, koaCtx: Context): Promise<void> {
  const { ctx, client } = registry;
  let result: DevcontainerLookupResult = 'error';
  try {
    const query = await authorizedQuery(registry, koaCtx, 'read', parseDevcontainerQuery);
    const call = callFor(registry, koaCtx, query, PULL);
    const { ref } = call;
    const explicitPlatform = typeof koaCtx.query.platform === 'string';
    const read = await readImageConfig(client, call, parsePlatform(query.platform), explicitPlatform);
    const view = describeDevcontainer(parseMetadataLabel(read.labels[METADATA_LABEL]));
    result = 'found';
    ctx.retention?.served(ref.target, [servedTag(ref.tag), read.digest]);
    koaCtx.body = { image: ref.image, digest: read.digest, ...view };
  } catch (err) {
    if (isServiceError(err)) {
      if (err instanceof ImageNotFoundError) result = 'absent';
      else if (err.status === 422) result = 'no_metadata';
    }
    throw err;
  } finally {
    ctx.metrics.devcontainerLookupsTotal.inc({ result });
  }
}

/** GET/DELETE /image and GET /devcontainer, straight against the registry's HTTP API v2. */
export function createRegistryRouter(ctx: AppContext): Router {
  const router = new Router();
  const client = new RegistryClient({ insecureRegistries: ctx.config.insecureRegistries });
  ctx.shutdownSignal.addEventListener('abort', () => client.close(), { once: true });
  const { insecureRegistries, registryAuth } = ctx.config;
  const registry: Registry = { ctx, client, access: { client, insecureRegistries, registryAuth } };
  router.get('/image', (koaCtx) => checkImage(registry, koaCtx));
  router.delete('/image', (koaCtx) => removeImage(registry, koaCtx));
  router.get('/devcontainer', (koaCtx) => lookupDevcontainer(registry, koaCtx));
  return router;
}
