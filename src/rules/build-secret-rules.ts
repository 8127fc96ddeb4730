/**
 * The rules of build secrets (docs/secrets.md), owned here and imported by the request check
 * (workers/build-secrets), the server file (config/build-secrets.ts) and the error texts: the id
 * grammar (a file name in the request's directory and BuildKit's `id=`), the limits, and which
 * server entries a repository is offered. Pure.
 */

/** The longest id. */
const BUILD_SECRET_ID_MAX_LENGTH = 64;
/** An id: a safe file name (never `.` or `..`) and a BuildKit secret id. */
const BUILD_SECRET_ID_PATTERN = `^[A-Za-z0-9][A-Za-z0-9_.-]{0,${BUILD_SECRET_ID_MAX_LENGTH - 1}}$`;
/** The id grammar in words, for error texts. */
export const BUILD_SECRET_ID_RULE = `1 to ${BUILD_SECRET_ID_MAX_LENGTH} characters of A-Z a-z 0-9 _ . -, the first a letter or digit`;
const ID = new RegExp(BUILD_SECRET_ID_PATTERN);
/** The largest value, in UTF-8 bytes. */
export const MAX_BUILD_SECRET_BYTES = 65_536; // 64 KiB
/** The most secrets one request may give. */
export const MAX_BUILD_SECRETS = 32;

export const isBuildSecretId = (id: string): boolean => ID.test(id);
export const buildSecretTooLarge = (value: string): boolean =>
  Buffer.byteLength(value, 'utf8') > MAX_BUILD_SECRET_BYTES;

/** Where a server entry may be offered: a host, and optionally a path prefix below it. */
export interface BuildSecretScope {
  /** Matched exactly, case-insensitively, against the URL's host name (no port). */
  readonly host: string;
  /** A plain prefix of the repository path (without its leading `/`); absent: the whole host. */
  readonly pathPrefix?: string;
}

/** A server entry, its value read at startup. */
export interface ServerBuildSecret {
  readonly id: string;
  readonly value: string;
  readonly repositories: readonly BuildSecretScope[];
}

export interface BuildSecret {
  readonly id: string;
  readonly value: string;
}

/** Whether `scope` covers the repository at `host` (a lower-cased host name) and `path`. */
export function scopeCovers(scope: BuildSecretScope, host: string, path: string): boolean {
  if (scope.host.toLowerCase() !== host.toLowerCase()) return false;
  return scope.pathPrefix === undefined || path.startsWith(scope.pathPrefix);
}

/**
 * The secrets a build gets (sorted by id): the server entries whose scopes cover the repository
 * (the first such entry of an id), then the request's own, which replace a server entry's value.
 */
export function offeredSecrets(
  server: readonly ServerBuildSecret[],
  repository: { readonly host: string; readonly path: string },
  requested: readonly BuildSecret[],
): BuildSecret[] {
  const byId = new Map<string, string>();
  for (const entry of server) {
    if (byId.has(entry.id)) continue;
    if (entry.repositories.some((scope) => scopeCovers(scope, repository.host, repository.path)))
      byId.set(entry.id, entry.value);
  }
  for (const secret of requested) byId.set(secret.id, secret.value);
  return [...byId.keys()].sort().map((id) => ({ id, value: byId.get(id) ?? '' }));
}
