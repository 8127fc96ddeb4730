/**
 * Every error the service answers, in one table: each stable code's HTTP status, its text (a
 * template whose `{placeholders}` take values, never prose), how a value is shown, its Retry-After
 * and when it happens; docs/errors.md is generated from it. Throw `serviceError(code, values)`
 * anywhere below the HTTP layer; src/http/app.ts answers it. Each code has its own class: tell
 * errors apart with `instanceof`, never by comparing `code` or the text.
 */
import {
  BUILD_SECRET_ID_RULE,
  MAX_BUILD_SECRET_BYTES,
  MAX_BUILD_SECRETS,
} from '../rules/build-secret-rules.js';
import { CACHE_TYPES } from '../rules/cache-spec.js';
import { DEFINITION_PLACES } from '../rules/definition.js';
import { FORGES, headerTitle } from '../rules/forges.js';
import { AUTH_REALM, BODY_LIMIT_BYTES } from '../rules/limits.js';
import { BUILD_FILTER_RULES, BUILD_REQUEST_FIELDS, QUERY_PARAMETER_RULES } from '../rules/request-shapes.js';
import { USAGE_QUERY_RULES } from '../rules/usage-query.js';

/** The headers a webhook signature is read from (src/rules/forges.ts), as the forges write them. */
const SIGNATURE_HEADERS = [...new Set(Object.values(FORGES).map((forge) => forge.signature.header))]
  .map((header) => `\`${headerTitle(header)}\``)
  .join(' or ');

/** A value the request gave, shown quoted (it may hold spaces, quotes or nothing). */
const quoted = (value: string): string => JSON.stringify(value);
/** A value the request gave that failed its grammar: quoted, at most 80 characters of it. */
const quotedCut = (value: string): string => JSON.stringify(value.slice(0, 80));
/** Items `; `-separated. */
const listed = (items: readonly string[]): string => items.join('; ');
/** Names shown as their rule (a name without one as itself), `; `-separated. */
const ruleList =
  (rules: Readonly<Record<string, string>>) =>
  (names: readonly string[]): string =>
    listed(names.map((name) => rules[name] ?? name));
const listOrNone = (items: readonly string[]): string => (items.length > 0 ? items.join(', ') : 'none');

interface ErrorEntry {
  readonly status: number;
  /** The `error` text of the body; `{name}` is replaced by the value `name`. */
  readonly text: string;
  /** How a value is shown in the text (`String(value)` for one not listed). */
  readonly format?: Readonly<Record<string, (value: never) => string>>;
  /** Body fields beside `error`, each holding a value as given (field name: placeholder name). */
  readonly body?: Readonly<Record<string, string>>;
  /** The Retry-After header, in seconds: fixed, or `given` by the thrower (an estimate). */
  readonly retryAfter?: number | 'given';
  /** Other headers of the answer, fixed (a challenge). */
  readonly headers?: Readonly<Record<string, string>>;
  /** One line: when the service answers this. */
  readonly when: string;
}

export const ERRORS = {
  // --- any route ---
  NOT_FOUND: { status: 404, text: 'not found', when: 'No route matches the method and path.' },
  INVALID_JSON: { status: 400, text: 'invalid JSON body', when: 'The request body is not valid JSON.' },
  BODY_TOO_LARGE: {
    status: 413,
    text: 'request body too large (limit {limit} bytes)',
    when: `The request body is larger than ${BODY_LIMIT_BYTES / 1024 / 1024} MiB.`,
  },
  UNREADABLE_REQUEST: {
    status: 400,
    text: 'the request could not be read: {reason}',
    when: 'The HTTP layer refused the request (unsupported body charset or encoding, request aborted).',
  },
  INTERNAL: {
    status: 500,
    text: 'internal error',
    when: 'A programming error outside any command step; reported to error tracking.',
  },

  // --- POST /build: the request ---
  INVALID_FIELDS: {
    status: 400,
    text: `missing or invalid fields: ${BUILD_REQUEST_FIELDS}`,
    when: 'The body is not a JSON object or fails the build request shape check (or a cache spec is malformed).',
  },
  INVALID_REPOSITORY_URL: {
    status: 400,
    text: 'unable to parse git repository URL: {repository}',
    when: '`repository` matches no accepted URL form (https://, ssh://, SCP-style).',
  },
  SCHEME_NOT_ALLOWED: {
    status: 400,
    text: 'repository URL scheme "{scheme}://" is not allowed: use https://, ssh:// or SCP-style (user@host:path) (git:// and http:// need insecure git protocols allowed)',
    when: '`repository` uses a scheme other than https:// or ssh:// (git:// and http:// unless allowed).',
  },
  CREDENTIALS_IN_URL: {
    status: 400,
    text: 'repository URL must not contain credentials: pass them in gitCredentials (username and token)',
    when: '`repository` embeds credentials (user:token@).',
  },
  INVALID_BRANCH: {
    status: 400,
    text: 'invalid branch {branch}: must be a valid git branch or tag name (git check-ref-format) not starting with "-"',
    when: '`branch` is not a valid git ref name.',
    format: { branch: quoted },
  },
  INVALID_BUILD_SECRET_ID: {
    status: 400,
    text: `buildSecrets: invalid secret id {id}: an id is ${BUILD_SECRET_ID_RULE}`,
    when: 'A key of `buildSecrets` is not a valid secret id.',
    format: { id: quotedCut },
  },
  BUILD_SECRET_NOT_STRING: {
    status: 400,
    text: 'buildSecrets: the value of secret "{id}" must be a string',
    when: 'A value of `buildSecrets` is not a string.',
  },
  BUILD_SECRET_TOO_LARGE: {
    status: 400,
    text: `buildSecrets: the value of secret "{id}" is larger than ${MAX_BUILD_SECRET_BYTES} bytes`,
    when: `A value of \`buildSecrets\` is longer than ${MAX_BUILD_SECRET_BYTES} bytes (UTF-8).`,
  },
  TOO_MANY_BUILD_SECRETS: {
    status: 400,
    text: `buildSecrets: {count} secrets given, at most ${MAX_BUILD_SECRETS} are allowed`,
    when: `\`buildSecrets\` has more than ${MAX_BUILD_SECRETS} entries.`,
  },
  CACHE_TYPE_NOT_ALLOWED: {
    status: 400,
    text: `buildOptions.{field}: cache type "{type}" is not allowed (allowed: ${CACHE_TYPES.join(', ')})`,
    when: `\`buildOptions.cacheFrom\` or \`cacheTo\` names a cache type other than ${CACHE_TYPES.join(', ')}.`,
  },
  IMAGE_NAME_UNDERIVABLE: {
    status: 400,
    text: 'unable to derive an image name from repository path {path}: provide image.name',
    when: 'No `image.name` is given and none can be derived from the repository path.',
  },
  NO_REGISTRY: {
    status: 400,
    text: 'no registry resolved for repository {repository}: provide image.registry or configure a matching registry mapping rule',
    when: 'No `image.registry` is given and no registry mapping rule matches the repository.',
  },
  HOST_KEY_NOT_PINNED: {
    status: 400,
    text: 'SSH host key policy is "pinned" but no pinned key configured for host {host}',
    when: 'The SSH host key policy is `pinned` and the resolved SSH credential has no `pinnedHostKey`.',
  },
  NO_DEFINITION: {
    status: 400,
    text: `the repository has no dev container definition (${DEFINITION_PLACES}) and no fallback image is configured`,
    when: 'The cloned repository has no devcontainer.json and no fallback image is configured.',
  },
  DEFINITION_OUTSIDE_CLONE: {
    status: 400,
    text: '{path} resolves outside the repository (through .. or a symbolic link); refusing to build it',
    when: 'The definition, or a file it names, resolves outside the clone.',
  },
  DEFINITION_OUTSIDE_READ_SET: {
    status: 400,
    text: "{path} is a symbolic link to a part of the repository the build does not read (only the definition's folder, its Dockerfile and build context, local features and compose files are checked out); refusing to build it",
    when: 'A symbolic link among the paths a build reads (or a `.devcontainer` folder that is a link) leads elsewhere in the repository.',
  },
  BUSY: {
    status: 429,
    text: 'already running {running} builds, the maximum; retry later',
    when: 'The instance already runs its maximum of concurrent builds; `Retry-After` gives seconds to wait.',
    retryAfter: 'given',
  },
  BUILDERS_FULL: {
    status: 429,
    text: 'every builder that answers already runs {perBuilder} builds, the maximum per builder; retry later',
    when: 'Every healthy builder runs `--max-builds-per-builder` builds (docs/fleet.md); `Retry-After` gives seconds to wait.',
    retryAfter: 'given',
  },
  QUEUE_FULL: {
    status: 429,
    text: '{queued} builds already wait for a slot, the maximum; retry later',
    when: 'An async build finds `build.maxQueued` requests waiting, or a prebuild `build.maxQueuedPrebuilds` prebuilds (docs/queue.md); `Retry-After` from how fast the queue drains.',
    retryAfter: 'given',
  },
  TENANT_QUEUE_FULL: {
    status: 429,
    text: 'tenant {tenant} already has {queued} builds waiting, its quota; retry later',
    when: "An async build of a tenant at its quota's `maxQueued` (docs/queue.md); `Retry-After` from how fast the queue drains.",
    retryAfter: 'given',
  },
  TENANT_BUSY: {
    status: 429,
    text: 'tenant {tenant} already runs {running} builds, its quota; retry later',
    when: "A synchronous `POST /build` of a tenant at its quota's `maxRunning` (an async one waits in the queue); `Retry-After` gives seconds to wait.",
    retryAfter: 'given',
  },
  TENANT_BUDGET: {
    status: 429,
    text: 'tenant {tenant} used its {minutes} build minutes of this month; reused images are still answered',
    when: "A build that would run BuildKit for a tenant past its quota's `monthlyBuildMinutes` (docs/usage.md); `Retry-After` gives the seconds to the month's end (UTC).",
    retryAfter: 'given',
  },
  PLATFORM_NOT_DECLARED: {
    status: 400,
    text: 'no builder declares platform {platform}, and no other builder may build it',
    when: 'No builder endpoint declares a requested platform, and `build.nativePlatformsOnly` is on or no endpoint declares nothing (docs/fleet.md); nothing was done.',
  },
  PLATFORM_BUILDERS_UNAVAILABLE: {
    status: 503,
    text: 'every builder declaring platform {platform} is down or full, and only native platforms are built; retry later',
    when: '`build.nativePlatformsOnly` is on and no builder declaring a requested platform answers or has room; `Retry-After` gives seconds to wait.',
    retryAfter: 'given',
  },

  // --- POST /build: the commands ---
  COMMAND_FAILED: {
    status: 500,
    text: '{command} {outcome}',
    when: 'A real external command (git, devcontainer) exited non-zero, timed out, was aborted or could not start; with `logId`.',
  },
  COMMAND_OUTPUT_UNEXPECTED: {
    status: 500,
    text: '{command} printed unexpected output',
    when: 'A command succeeded but printed something the service cannot use (e.g. no commit id); with `logId`.',
  },
  STEP_FAILED: {
    status: 500,
    text: '{step} failed',
    when: 'Something other than the command failed once the step had opened its log (e.g. a scratch file); with `logId`, whose last line says what.',
  },

  // --- logs ---
  INVALID_LOG_ID: {
    status: 400,
    text: 'invalid log id: {id}',
    when: 'The `{id}` of /logs/{id} does not have the form of a log id.',
    format: { id: quoted },
  },
  LOG_NOT_FOUND: {
    status: 404,
    text: 'log not found',
    when: 'The log id is unknown, rotated away or already deleted; with `logId`.',
  },
  INVALID_FOLLOW: {
    status: 400,
    text: 'invalid query parameter follow: true or false',
    when: '`GET /logs/{id}` was given `follow` with a value other than `true` or `false`.',
  },

  // --- GET /builds ---
  INVALID_BUILD_FILTERS: {
    status: 400,
    text: 'invalid filters for GET /builds: {filters}',
    when: 'A filter of `GET /builds` is unknown, repeated, empty or malformed.',
    format: { filters: ruleList(BUILD_FILTER_RULES) },
  },
  INVALID_BUILDS_PAGE: {
    status: 400,
    text: 'invalid page of GET /builds: limit is a whole number from {min} to {max} (default {default}), after is the next of an earlier page',
    when: 'The `limit` of `GET /builds` is not a whole number in its bounds, or `after` is not a `next` it answered; either given twice.',
  },

  // --- GET /usage ---
  INVALID_USAGE_QUERY: {
    status: 400,
    text: 'invalid parameters for GET /usage: {parameters}',
    when: 'A parameter of `GET /usage` is unknown, repeated or malformed, or the range is empty or too long (docs/usage.md).',
    format: { parameters: ruleList(USAGE_QUERY_RULES) },
  },

  // --- GET /events/deliveries ---
  INVALID_DELIVERY_FILTERS: {
    status: 400,
    text: 'invalid filters for GET /events/deliveries: {filters}',
    when: 'A filter of `GET /events/deliveries` is unknown, repeated, or names no subscription or state.',
    format: { filters: listed },
  },
  // --- caller identity (docs/auth.md; only with auth.mode enforce) ---
  TOKEN_REQUIRED: {
    status: 401,
    text: 'a bearer token is required (Authorization: Bearer <token>)',
    when: 'Identities are enforced and the request carries no `Authorization: Bearer` token.',
    headers: { 'WWW-Authenticate': `Bearer realm="${AUTH_REALM}"` },
  },
  TOKEN_INVALID: {
    status: 401,
    text: 'the bearer token is refused: {reason}',
    when: 'The token is no known static token and no valid ID token of a configured issuer (expired, not yet valid, wrong audience or issuer, bad signature, unsupported algorithm, malformed, over 8 KiB).',
    headers: { 'WWW-Authenticate': `Bearer realm="${AUTH_REALM}", error="invalid_token"` },
  },
  ACCESS_DENIED: {
    status: 403,
    text: 'no access rule grants {action} on {resource} to {caller}',
    when: 'The caller is known but no rule grants the action on every resource the request touches.',
  },
  ISSUER_UNAVAILABLE: {
    status: 503,
    text: 'the signing keys of issuer {issuer} cannot be fetched now; retry later',
    when: 'An ID token of an issuer whose keys were never fetched, and its discovery or key set does not answer; with Retry-After: 30.',
    retryAfter: 30,
  },
  SESSION_ENDED: {
    status: 401,
    text: 'the sign-in session has ended; sign in again',
    when: "A call carries a person's session cookie (docs/auth.md) that is unknown, ended by sign-out, or past its end.",
  },
  CSRF_REFUSED: {
    status: 403,
    text: 'a state-changing call with a session cookie needs the X-CSRF-Token header of this session',
    when: "A POST or DELETE made with a person's session cookie lacks the session's CSRF token (double submit) or comes from another origin.",
  },
  SIGN_IN_REFUSED: {
    status: 400,
    text: 'the sign-in is refused: {reason}',
    when: '`GET /auth/callback` without a sign-in under way in this browser, with another `state`, a code the provider refuses (used twice, another verifier), an ID token of another client, another `nonce`, or one refused as a bearer token would be.',
  },

  // --- the build resource: async POST /build, GET and DELETE /builds/{id} ---
  BUILD_NOT_FOUND: {
    status: 404,
    text: 'no build {id}: unknown, or its record is no longer kept',
    when: '`GET` or `DELETE /builds/{id}` names a build that is unknown or past the kept history.',
  },
  BUILD_FINISHED: {
    status: 409,
    text: 'build {id} has already finished: nothing to cancel',
    when: '`DELETE /builds/{id}` names a build that has finished.',
  },
  INVALID_WAIT: {
    status: 400,
    text: 'invalid query parameter wait: a whole number of seconds from {min} to {max}',
    when: '`GET /builds/{id}` was given a `wait` that is not a whole number from 1 to 60.',
  },
  BUILD_CANCELLED: {
    status: 500,
    text: 'the build was cancelled by {by}',
    when: 'The build was cancelled by `DELETE /builds/{id}` before it ended (counted as `failure`).',
  },
  BUILD_NOT_STARTED: {
    status: 503,
    text: 'the build waited in the queue and never started: {reason}',
    when: 'A queued build ended before a slot took it: the service stopped (embedded mode), or its replica died holding the credentials of its request, or the queue lost it (its replica died or lost Redis between recording and queueing it, or between taking and starting it: Redis mode); counted as `failure`.',
  },
  BUILD_LOST: {
    status: 500,
    text: 'the build was lost: its replica {replica} stopped renewing its record, and only that replica could run it (its request carried credentials of its own, or its caller waited on that replica)',
    when: 'Redis mode: the replica running the build died (its record lease and heartbeat expired) before it ended, and no other replica may run it again (a build without credentials of its own, answered asynchronously, runs again instead).',
  },
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    text: 'invalid Idempotency-Key: 1 to {max} visible ASCII characters',
    when: 'The `Idempotency-Key` header of `POST /build` is empty, too long, repeated or not visible ASCII.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    text: 'the Idempotency-Key was already used with a different request body',
    when: 'A `POST /build` repeats a kept `Idempotency-Key` with another body.',
  },

  // --- Redis mode ---
  STORE_UNAVAILABLE: {
    status: 503,
    text: 'the shared store (Redis) is unavailable: builds and command logs need it; retry later',
    when: 'Redis mode: Redis does not answer (POST /build, GET /builds, GET/DELETE /logs); with Retry-After: 10.',
    retryAfter: 10,
  },

  // --- build secrets identity ---
  SECRETS_IDENTITY_KEY_INVALID: {
    status: 500,
    text: 'the build secrets identity key in {where} is not 64 hex digits',
    when: 'A build offered secrets found the identity key (Redis, or the scratch space file) altered (docs/secrets.md).',
  },

  // --- image retention ---
  RETENTION_NOT_DELETE_MODE: {
    status: 409,
    text: 'retention mode is {mode}: POST /retention/run deletes only in delete mode (GET /retention/plan shows the plan)',
    when: '`POST /retention/run` while `retention.mode` is `off` or `dry-run` (docs/retention.md).',
  },
  RETENTION_RUNNING: {
    status: 409,
    text: 'a retention run is already under way (on this or another replica); retry later',
    when: '`POST /retention/run` while another run holds the retention lock; with Retry-After: 60.',
    retryAfter: 60,
  },

  // --- GET/DELETE /image, GET /devcontainer: the request ---
  INVALID_QUERY: {
    status: 400,
    text: 'missing or invalid query parameters: {parameters}',
    when: 'A query parameter is missing, empty, holds a control character, or `platform` is not os/arch[/variant].',
    format: { parameters: ruleList(QUERY_PARAMETER_RULES) },
  },
  REGISTRY_HEADERS_UNPAIRED: {
    status: 400,
    text: 'X-Registry-Username and X-Registry-Password must be given together',
    when: 'Only one of the two registry credential headers is given.',
  },
  REGISTRY_SCHEME_NOT_ALLOWED: {
    status: 400,
    text: 'registry: scheme "{scheme}://" is not allowed (use host[:port][/namespace] or https://host[:port][/namespace])',
    when: '`registry` starts with a scheme other than https:// or http://.',
  },
  INVALID_REGISTRY: {
    status: 400,
    text: 'registry: {registry} is not a host[:port], optionally followed by a namespace path',
    when: '`registry` is not a host name or address with an optional port and an optional namespace path (`ghcr.io/org`).',
    format: { registry: quoted },
  },
  REGISTRY_HTTP_NOT_ALLOWED: {
    status: 400,
    text: 'registry: http:// is only allowed for a registry listed in insecureRegistries',
    when: '`registry` starts with http:// but is not listed in insecureRegistries.',
  },
  INVALID_IMAGE_NAME: {
    status: 400,
    text: 'name: {name} is not a valid repository name (lowercase path components [a-z0-9] separated by ".", "_", "__", "-" and "/"; at most 255 characters with the registry\'s namespace)',
    when: "`name` is not a valid registry repository name, or is too long with the registry's namespace path.",
    format: { name: quoted },
  },
  INVALID_TAG: {
    status: 400,
    text: 'tag: {tag} is not a valid tag ([A-Za-z0-9_][A-Za-z0-9._-], at most 128 characters)',
    when: '`tag` is not a valid registry tag.',
    format: { tag: quoted },
  },

  // --- GET /devcontainer: the image ---
  // --- POST /hooks/{forge} ---
  HOOK_NOT_CONFIGURED: {
    status: 404,
    text: 'no webhook secret is configured for {forge}',
    when: 'POST /hooks/{forge} for a forge whose secret file is not set (docs/prebuilds.md).',
  },
  HOOK_SIGNATURE_INVALID: {
    status: 401,
    text: 'bad or missing webhook signature',
    when: `The ${SIGNATURE_HEADERS} header is missing or does not match the secret.`,
  },
  INVALID_HOOK_PAYLOAD: {
    status: 400,
    text: 'invalid {forge} push payload: {field}',
    when: 'A signed push event whose payload lacks a field or holds a malformed one; nothing is built.',
  },
  HOOK_EVENT_UNSUPPORTED: {
    status: 400,
    text: 'unsupported {forge} event {event} (push and ping are taken)',
    when: 'A signed webhook delivery of an event other than push or ping.',
    format: { event: quoted },
  },
  HOOK_BODY_TOO_LARGE: {
    status: 413,
    text: 'webhook body too large (limit {limit} bytes)',
    when: 'A webhook body larger than 25 MiB.',
  },

  IMAGE_NOT_FOUND: {
    status: 404,
    text: 'image {image} not found',
    when: 'GET /devcontainer: the registry has no manifest for the tag.',
  },
  PLATFORM_NOT_FOUND: {
    status: 422,
    text: 'platform {platform} not found in {image}; available: {available}',
    when: 'The image has no entry for the asked platform; `availablePlatforms` lists those it has.',
    format: { available: listOrNone },
    body: { availablePlatforms: 'available' },
  },
  METADATA_LABEL_MISSING: {
    status: 422,
    text: 'the image has no devcontainer.metadata label',
    when: 'The image config has no `devcontainer.metadata` label.',
  },
  METADATA_LABEL_NOT_JSON: {
    status: 422,
    text: 'the devcontainer.metadata label is not valid JSON',
    when: 'The `devcontainer.metadata` label is not JSON.',
  },
  METADATA_LABEL_NOT_ENTRIES: {
    status: 422,
    text: 'the devcontainer.metadata label is neither a JSON array nor a JSON object',
    when: 'The `devcontainer.metadata` label is JSON but neither an array nor an object.',
  },

  // --- GET/DELETE /image, GET /devcontainer: the registry ---
  REGISTRY_ANSWERED: {
    status: 502,
    text: '{registry} answered {status} for {image}',
    when: 'The registry or its token realm answered an unexpected HTTP status (after authentication).',
  },
  PLATFORM_MANIFEST_MISSING: {
    status: 502,
    text: '{registry} answered 404 for {image} ({digest})',
    when: 'The manifest a multi-platform index points to for the platform is missing.',
  },
  REGISTRY_UNREACHABLE: {
    status: 502,
    text: '{registry}: {reason} for {image}',
    when: 'The registry could not be talked to: DNS, connection, TLS, timeout, refused redirect, oversized answer.',
  },
  TOKEN_REALM_UNREACHABLE: {
    status: 502,
    text: '{registry}: token realm {realm}: {reason} for {image}',
    when: "The registry's token realm could not be talked to (same reasons as above).",
  },
  TOKEN_REALM_INVALID: {
    status: 502,
    text: '{registry}: invalid token realm in its challenge for {image}',
    when: "The registry's bearer challenge names no valid realm URL.",
  },
  TOKEN_REALM_SCHEME_REFUSED: {
    status: 502,
    text: '{registry}: token realm scheme {scheme} refused for {image}',
    when: "The registry's bearer challenge names a realm that is neither https nor http.",
  },
  TOKEN_NOT_JSON: {
    status: 502,
    text: '{registry}: token realm answered invalid JSON for {image}',
    when: 'The token realm answered 200 with a body that is not JSON.',
  },
  TOKEN_MISSING: {
    status: 502,
    text: '{registry}: token realm answered without a token for {image}',
    when: 'The token realm answered 200 without `token` or `access_token`.',
  },
  DIGEST_ALGORITHM_UNSUPPORTED: {
    status: 502,
    text: '{registry}: unsupported digest algorithm in {digest} for {image}',
    when: 'A manifest points to content by a digest that is neither sha256 nor sha512.',
  },
  DIGEST_MISMATCH: {
    status: 502,
    text: '{registry}: content does not match digest {digest} for {image}',
    when: 'Content fetched by digest does not hash to that digest.',
  },
  MANIFEST_INVALID: {
    status: 502,
    text: '{registry}: unsupported or invalid manifest for {image}',
    when: "The tag's manifest is neither an image manifest nor an index the service reads.",
  },
  PLATFORM_MANIFEST_UNSUPPORTED: {
    status: 502,
    text: '{registry}: unsupported manifest {digest} for {image}',
    when: "The platform's manifest in an index is not an image manifest.",
  },
  IMAGE_CONFIG_INVALID: {
    status: 502,
    text: '{registry}: invalid image config for {image}',
    when: "The image's config blob is not a valid image config.",
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;

/** The `{reason}` of REGISTRY_UNREACHABLE and TOKEN_REALM_UNREACHABLE: why no usable HTTP answer came. */
export const TRANSPORT_REASONS = {
  TIMEOUT: {
    text: 'no answer within {seconds} s',
    when: 'The call (redirects and body included) outlasted its deadline.',
  },
  TOO_LARGE: {
    text: 'response larger than {max} bytes',
    when: 'The answer is larger than the service reads for that kind of content.',
  },
  REDIRECT_INVALID: { text: 'invalid redirect location', when: 'A redirect names no valid URL.' },
  REDIRECT_SCHEME_REFUSED: {
    text: 'redirect to a {protocol} URL refused',
    when: 'A redirect points to a scheme other than https or http.',
  },
  REDIRECT_DOWNGRADE_REFUSED: {
    text: 'redirect from https to plain http refused',
    when: 'A redirect would leave https for plain http.',
  },
  CONNECTION_REFUSED: { text: 'connection refused', when: 'Nothing listens at the address.' },
  NOT_RESOLVED: { text: 'host name not resolved', when: 'DNS does not know the host.' },
  CONNECTION_RESET: { text: 'connection reset', when: 'The peer reset the connection.' },
  CONNECTION_TIMED_OUT: {
    text: 'connection timed out',
    when: 'The connection could not be established in time.',
  },
  HOST_UNREACHABLE: { text: 'host unreachable', when: 'No route to the host or its network.' },
  TLS_FAILED: {
    text: 'TLS error ({code})',
    when: 'The TLS handshake failed (untrusted or invalid certificate...); `code` is the TLS error code.',
  },
  INVALID_HTTP: { text: 'invalid HTTP answer', when: 'The peer does not speak HTTP.' },
  CLOSED_EARLY: {
    text: 'connection closed before the response ended',
    when: 'The answer was cut before its end.',
  },
  NETWORK_CODE: {
    text: 'network error ({code})',
    when: 'Any other network failure, with its system error code.',
  },
  NETWORK: { text: 'network error', when: 'Any other network failure, without a code.' },
} as const satisfies Record<string, Omit<ErrorEntry, 'status'>>;

export type TransportReason = keyof typeof TRANSPORT_REASONS;

/** The `{names}` of a text template. */
type Placeholders<T extends string> = T extends `${string}{${infer Name}}${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;
type Entry<C extends ErrorCode> = (typeof ERRORS)[C];
type Formats<C extends ErrorCode> = Entry<C> extends { readonly format: infer F } ? F : object;
/** A value is what its formatter takes, or a string or number shown as is. */
type ValueOf<F, K extends string> = K extends keyof F
  ? F[K] extends (value: infer V) => string
    ? V
    : never
  : string | number;
/** The values of the placeholders of `code`'s text, typed by the table. */
export type ErrorValues<C extends ErrorCode> = [Placeholders<Entry<C>['text']>] extends [never]
  ? Readonly<Record<string, never>>
  : { readonly [K in Placeholders<Entry<C>['text']>]: ValueOf<Formats<C>, K> };

type ReasonValues<R extends TransportReason> = Readonly<
  Record<Placeholders<(typeof TRANSPORT_REASONS)[R]['text']>, string | number>
>;

type Formatter = (value: unknown) => string;

const fill = (
  template: string,
  values: Readonly<Record<string, unknown>>,
  format: Readonly<Record<string, Formatter>> = {},
): string =>
  template.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => (format[name] ?? String)(values[name]));

const textOf = (entry: ErrorEntry, values: Readonly<Record<string, unknown>>): string =>
  fill(entry.text, values, entry.format as Readonly<Record<string, Formatter>> | undefined);

/** The table's text of `code` with its placeholders filled, each value shown as the table says (pure). */
export function errorText<C extends ErrorCode>(code: C, values: ErrorValues<C>): string {
  return textOf(ERRORS[code], values);
}

/** The text of a transport failure's reason, placeholders filled (pure). */
export function transportReason<R extends TransportReason>(reason: R, values: ReasonValues<R>): string {
  return fill(TRANSPORT_REASONS[reason].text, values);
}

export interface ErrorDetails {
  /** Id of the captured command log (500 from a command step, 404 for logs). */
  logId?: string;
  /** Extra response headers, e.g. Retry-After on 429. */
  headers?: Record<string, string>;
  /** Extra JSON fields merged into the body (never secrets). */
  body?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The base of every error the service answers. Each code has its own subclass (ERROR_CLASSES, as
 * undici's lib/core/errors.js gives each class one stable code): tell errors apart with
 * `instanceof`, never by comparing `code` or the message at a call site.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails;

  /** Only serviceError and withLogId call this (through ERROR_CLASSES): the message is always the table's text. */
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = details;
  }

  /** The JSON body of the response: `{error, logId?, ...}`. */
  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { error: this.message, ...this.details.body };
    if (this.details.logId !== undefined) body.logId = this.details.logId;
    return body;
  }
}

export const isServiceError = (err: unknown): err is ServiceError => err instanceof ServiceError;

/** Why something failed, in words fit for a log line or an answer: the error's message. */
export const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : 'unknown failure');

/**
 * Why something failed, for a reader outside the service (a delivery record, a build log): a
 * service error's text, else `fallback` (an unexpected error's message may say too much).
 */
export const publicReasonOf = (err: unknown, fallback: string): string =>
  isServiceError(err) ? err.message : fallback;

/** An error of one code. */
export type CodedError<C extends ErrorCode> = ServiceError & { readonly code: C };
type ErrorClass<C extends ErrorCode> = new (message: string, details?: ErrorDetails) => CodedError<C>;

/** The subclass of `code`: its instances carry that code, and only they do. */
const classOf = <C extends ErrorCode>(code: C): ErrorClass<C> =>
  class extends ServiceError {
    declare readonly code: C;
    constructor(message: string, details?: ErrorDetails) {
      super(code, message, details);
    }
  };

/** One subclass of ServiceError per code of the table. */
export const ERROR_CLASSES = Object.fromEntries(
  Object.keys(ERRORS).map((code) => [code, classOf(code as ErrorCode)]),
) as { readonly [C in ErrorCode]: ErrorClass<C> };

// The classes callers tell apart.
export const InternalError = ERROR_CLASSES.INTERNAL;
export const InvalidFieldsError = ERROR_CLASSES.INVALID_FIELDS;
export const BusyError = ERROR_CLASSES.BUSY;
export const BuildersFullError = ERROR_CLASSES.BUILDERS_FULL;
export const CommandFailedError = ERROR_CLASSES.COMMAND_FAILED;
export const StepFailedError = ERROR_CLASSES.STEP_FAILED;
export const ImageNotFoundError = ERROR_CLASSES.IMAGE_NOT_FOUND;

/** What a thrower may add to an error (never a secret): the step's log, the cause for the service's own log. */
interface ErrorOptions {
  logId?: string;
  cause?: unknown;
}
type GivenRetryAfter = { readonly retryAfter: 'given' };
/** The options of `code`: the Retry-After seconds where the table says the thrower gives them. */
type OptionsOf<C extends ErrorCode> =
  Entry<C> extends GivenRetryAfter
    ? [options: ErrorOptions & { readonly retryAfterSeconds: number }]
    : [options?: ErrorOptions];
/** The values, then the options (values may be left out where the text has no placeholder). */
type Arguments<C extends ErrorCode> = [Placeholders<Entry<C>['text']>] extends [never]
  ? Entry<C> extends GivenRetryAfter
    ? [values: ErrorValues<C>, ...OptionsOf<C>]
    : [values?: ErrorValues<C>, ...OptionsOf<C>]
  : [values: ErrorValues<C>, ...OptionsOf<C>];

/** The error of `code`: the table's text filled with `values`, its Retry-After, its class. */
export function serviceError<C extends ErrorCode>(code: C, ...args: Arguments<C>): CodedError<C> {
  const [values = {}, options = {}] = args as unknown as [Readonly<Record<string, unknown>>?, ErrorOptions?];
  const { retryAfterSeconds, ...details } = options as ErrorOptions & { retryAfterSeconds?: number };
  const entry: ErrorEntry = ERRORS[code];
  const seconds = retryAfterSeconds ?? (entry.retryAfter === 'given' ? undefined : entry.retryAfter);
  const fixed = entry.headers ?? {};
  const headers =
    seconds === undefined && entry.headers === undefined
      ? {}
      : { headers: { ...fixed, ...(seconds === undefined ? {} : { 'Retry-After': String(seconds) }) } };
  const fields = Object.entries(entry.body ?? {}).map(([field, name]) => [field, values[name]]);
  const body = fields.length === 0 ? {} : { body: Object.fromEntries(fields) as Record<string, unknown> };
  return new ERROR_CLASSES[code](textOf(entry, values), { ...details, ...headers, ...body });
}

/** The same error answered with the id of the log of the step it happened in. */
export const withLogId = (err: ServiceError, logId: string): ServiceError =>
  new ERROR_CLASSES[err.code](err.message, { ...err.details, logId });
