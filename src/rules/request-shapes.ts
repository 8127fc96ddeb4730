/**
 * The request shapes told in words: what each field or parameter must be, as the shape-check 400s
 * say it (src/errors/errors.ts). Their schemas (src/http/build-schema.ts, builds-query.ts,
 * registry-schemas.ts) check them; a change to a schema changes its words here. Pure.
 */
import { CACHE_TYPES } from './cache-spec.js';
import { BUILDER_MODES, REQUEST_ID_MAX_LENGTH } from './limits.js';

/** `a, b or c`. */
const orList = (items: readonly string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

/** The accepted shape of a POST /build body (src/http/build-schema.ts). */
export const BUILD_REQUEST_FIELDS =
  'repository (required); branch (optional non-empty string or null: branch or tag, default branch when unset); ' +
  'image (optional object or null: registry, name, tag, each an optional non-empty string, derived when unset); ' +
  'gitCredentials (optional object: username and token, together); ' +
  'registryCredentials (optional object: registry, username and password, together); ' +
  'platforms (optional array of "os/arch[/variant]" strings); ' +
  'buildSecrets (optional object: secret id -> value string); ' +
  `buildOptions (optional object: noCache boolean, cacheFrom and cacheTo cache specs of type ${orList(CACHE_TYPES)}, ` +
  `mode ${orList(BUILDER_MODES.map((m) => `"${m}"`))})`;

/** The longest `repository` filter of GET /builds. */
export const MAX_REPOSITORY_FILTER_LENGTH = 2048;

/** What each filter of GET /builds must be (src/http/builds-query.ts; `other`: one that does not exist). */
export const BUILD_FILTER_RULES: Readonly<Record<string, string>> = {
  requestId: `requestId (1 to ${REQUEST_ID_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : -)`,
  repository: `repository (the repository as given to POST /build, at most ${MAX_REPOSITORY_FILTER_LENGTH} characters)`,
  status: 'status (running, or a metric status: success, failure, invalid_request, busy)',
  branch: `branch (the branch as the build's record tells it, at most ${MAX_REPOSITORY_FILTER_LENGTH} characters)`,
  trigger: 'trigger (api, push, reconcile or refresh)',
  caller: `caller (the subject of the record's requestedBy, at most ${MAX_REPOSITORY_FILTER_LENGTH} characters)`,
  tenant: `tenant (the build's tenant as the queue names it, at most ${MAX_REPOSITORY_FILTER_LENGTH} characters)`,
  other:
    'no other filter (filters: requestId, repository, status, branch, trigger, caller, tenant; page: limit, after)',
};

/** What each query parameter of GET/DELETE /image and GET /devcontainer must be (src/http/registry-schemas.ts). */
export const QUERY_PARAMETER_RULES: Readonly<Record<string, string>> = {
  registry: 'registry (required, non-empty string, host[:port] optionally followed by a namespace path)',
  name: 'name (required, non-empty string)',
  tag: 'tag (required, non-empty string)',
  platform: 'platform (optional, os/arch[/variant])',
};
