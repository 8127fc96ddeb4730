/**
 * Every error the service answers, in one place: a stable code, its HTTP status,
 * and the body it produces. Throw a ServiceError anywhere below the HTTP layer;
 * the error middleware in src/app.ts turns it into the response.
 * Never identify an error by its message text: compare `code`.
 */

export const ERROR_STATUS = {
  NOT_FOUND: 404,
  INVALID_JSON: 400,
  BAD_REQUEST: 400,
  BODY_TOO_LARGE: 413,
  INVALID_FIELDS: 400,
  INVALID_QUERY: 400,
  INVALID_REPOSITORY_URL: 400,
  SCHEME_NOT_ALLOWED: 400,
  CREDENTIALS_IN_URL: 400,
  INVALID_BRANCH: 400,
  CACHE_TYPE_NOT_ALLOWED: 400,
  IMAGE_NAME_UNDERIVABLE: 400,
  NO_REGISTRY: 400,
  HOST_KEY_NOT_PINNED: 400,
  NO_DEFINITION: 400,
  DEFINITION_OUTSIDE_CLONE: 400,
  INVALID_LOG_ID: 400,
  LOG_NOT_FOUND: 404,
  IMAGE_NOT_FOUND: 404,
  NO_METADATA: 422,
  PLATFORM_NOT_FOUND: 422,
  BUSY: 429,
  COMMAND_FAILED: 500,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  REGISTRY_FAILED: 502,
  STORE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetails {
  /** Id of the captured command log (500 from a failed command, 404 for logs). */
  logId?: string;
  /** Extra response headers, e.g. Retry-After on 429. */
  headers?: Record<string, string>;
  /** Extra JSON fields merged into the body (never secrets). */
  body?: Record<string, unknown>;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERROR_STATUS[code];
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

// Constructors for errors whose text the contract fixes. Keep texts here, not at throw sites.

export const notFound = (): ServiceError => new ServiceError('NOT_FOUND', 'not found');

export const badRequest = (message: string): ServiceError => new ServiceError('BAD_REQUEST', message);

export const invalidJson = (): ServiceError => new ServiceError('INVALID_JSON', 'invalid JSON body');

export const bodyTooLarge = (limitBytes: number): ServiceError =>
  new ServiceError('BODY_TOO_LARGE', `request body too large (limit ${limitBytes} bytes)`);

/** The accepted shape of a POST /build body, for the shape-check 400. */
export const BUILD_REQUEST_FIELDS_TEXT =
  'repository (required); branch (optional non-empty string or null: branch or tag, default branch when unset); ' +
  'image (optional object or null: registry, name, tag, each an optional non-empty string, derived when unset); ' +
  'gitCredentials (optional object: username and token, together); ' +
  'registryCredentials (optional object: registry, username and password, together); ' +
  'platforms (optional array of "os/arch[/variant]" strings); ' +
  'buildOptions (optional object: noCache boolean, cacheFrom and cacheTo cache specs of type registry, gha or inline, ' +
  'mode "auto" or "never")';

export const invalidFields = (): ServiceError =>
  new ServiceError('INVALID_FIELDS', `missing or invalid fields: ${BUILD_REQUEST_FIELDS_TEXT}`);

export const invalidBranch = (branch: string): ServiceError =>
  new ServiceError(
    'INVALID_BRANCH',
    `invalid branch ${JSON.stringify(branch)}: must be a valid git branch or tag name (git check-ref-format) not starting with "-"`,
  );

export const invalidRepositoryUrl = (repository: string): ServiceError =>
  new ServiceError('INVALID_REPOSITORY_URL', `unable to parse git repository URL: ${repository}`);

export const schemeNotAllowed = (scheme: string): ServiceError =>
  new ServiceError(
    'SCHEME_NOT_ALLOWED',
    `repository URL scheme "${scheme}://" is not allowed: use https://, ssh:// or SCP-style (user@host:path)` +
      ' (git:// and http:// need insecure git protocols allowed)',
  );

export const credentialsInUrl = (): ServiceError =>
  new ServiceError(
    'CREDENTIALS_IN_URL',
    'repository URL must not contain credentials: pass them in gitCredentials (username and token)',
  );

export const cacheTypeNotAllowed = (field: 'cacheFrom' | 'cacheTo', type: string): ServiceError =>
  new ServiceError(
    'CACHE_TYPE_NOT_ALLOWED',
    `buildOptions.${field}: cache type "${type}" is not allowed (allowed: registry, gha, inline)`,
  );

export const imageNameUnderivable = (path: string): ServiceError =>
  new ServiceError(
    'IMAGE_NAME_UNDERIVABLE',
    `unable to derive an image name from repository path ${path}: provide image.name`,
  );

export const noRegistry = (repository: string): ServiceError =>
  new ServiceError(
    'NO_REGISTRY',
    `no registry resolved for repository ${repository}: provide image.registry or configure a matching registry mapping rule`,
  );

export const hostKeyNotPinned = (host: string): ServiceError =>
  new ServiceError(
    'HOST_KEY_NOT_PINNED',
    `SSH host key policy is "pinned" but no pinned key configured for host ${host}`,
  );

export const noDefinition = (): ServiceError =>
  new ServiceError(
    'NO_DEFINITION',
    'the repository has no dev container definition (.devcontainer/devcontainer.json, .devcontainer.json' +
      ' or .devcontainer/<folder>/devcontainer.json) and no fallback image is configured',
  );

/** `what` names the offending path as written in the repository (never a server path). */
export const definitionOutsideClone = (what: string): ServiceError =>
  new ServiceError(
    'DEFINITION_OUTSIDE_CLONE',
    `${what} resolves outside the repository (through .. or a symbolic link); refusing to build it`,
  );

export const invalidLogId = (id: string): ServiceError =>
  new ServiceError('INVALID_LOG_ID', `invalid log id: ${JSON.stringify(id)}`);

export const logNotFound = (logId: string): ServiceError =>
  new ServiceError('LOG_NOT_FOUND', 'log not found', { logId });

export const busy = (running: number, retryAfterSeconds: number): ServiceError =>
  new ServiceError('BUSY', `already running ${running} builds, the maximum; retry later`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

/** A real external command ran and failed: the body names the command and its exit code, never its output. */
export const commandFailed = (commandLine: string, outcome: string, logId: string): ServiceError =>
  new ServiceError('COMMAND_FAILED', `${commandLine} ${outcome}`, { logId });

export const notImplemented = (what: string): ServiceError =>
  new ServiceError('NOT_IMPLEMENTED', `${what} is not implemented yet`);

/** Redis mode: the shared store (Redis) cannot be reached; never carries its URL or the client's error. */
export const storeUnavailable = (): ServiceError =>
  new ServiceError(
    'STORE_UNAVAILABLE',
    'the shared store (Redis) is unavailable: builds and command logs need it; retry later',
    { headers: { 'Retry-After': '10' } },
  );

export const internal = (cause: unknown): ServiceError =>
  new ServiceError('INTERNAL', 'internal error', { cause });

// Registry endpoints (GET/DELETE /image, GET /devcontainer).

export const invalidQuery = (why: string): ServiceError => new ServiceError('INVALID_QUERY', why);

/** The registry answered an unexpected status (after auth). Never carries a credential. */
export const registryAnswered = (registry: string, status: number, image: string): ServiceError =>
  new ServiceError('REGISTRY_FAILED', `${registry} answered ${status} for ${image}`);

/** The registry could not be talked to (DNS, connection, TLS, timeout, oversized or malformed answer). */
export const registryUnreachable = (
  registry: string,
  reason: string,
  image: string,
  cause?: unknown,
): ServiceError => new ServiceError('REGISTRY_FAILED', `${registry}: ${reason} for ${image}`, { cause });

export const imageNotFound = (image: string): ServiceError =>
  new ServiceError('IMAGE_NOT_FOUND', `image ${image} not found`);

export const platformNotFound = (image: string, platform: string, available: string[]): ServiceError =>
  new ServiceError(
    'PLATFORM_NOT_FOUND',
    `platform ${platform} not found in ${image}; available: ${available.length > 0 ? available.join(', ') : 'none'}`,
    { body: { availablePlatforms: available } },
  );
