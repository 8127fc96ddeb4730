/**
 * Ambient registry auth lookup in a docker-config document (`{auths: {<key>: entry}}`),
 * matching keys the way the docker CLI does: a key may carry a scheme (`https://`) and a
 * path (`/v1/`); only its host[:port] counts. `docker.io`, `index.docker.io`,
 * `registry-1.docker.io` and the classic `https://index.docker.io/v1/` all mean Docker Hub.
 * Pure: no I/O.
 */
import type { DockerAuthEntry, DockerConfigDocument } from './types.js';

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

const DOCKER_HUB_HOSTS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);
/** The key `docker login` writes for Docker Hub. */
export const DOCKER_HUB_AUTH_KEY = 'https://index.docker.io/v1/';

/** `https://host:port/path` -> `host:port` (lower-cased), like docker's ConvertToHostname. */
export function authKeyHost(key: string): string {
  let rest = key.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  if (slash >= 0) rest = rest.slice(0, slash);
  return rest.toLowerCase();
}

const canonicalHost = (host: string): string => {
  const h = authKeyHost(host);
  return DOCKER_HUB_HOSTS.has(h) ? 'docker.io' : h;
};

/** The username and password of one entry: `auth` (base64 `user:password`) wins over the fields. */
export function decodeAuthEntry(entry: DockerAuthEntry): RegistryCredentials | undefined {
  if (typeof entry.auth === 'string' && entry.auth.length > 0) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (typeof entry.username === 'string' && entry.username.length > 0 && typeof entry.password === 'string') {
    return { username: entry.username, password: entry.password };
  }
  return undefined;
}

/**
 * The ambient credentials for `registryHost` (host[:port], e.g. `127.0.0.1:5000` or
 * `registry-1.docker.io`), or undefined. An exact key wins over a key that only matches
 * after normalisation (scheme, path, case), like docker's lookup.
 */
export function findRegistryAuth(
  doc: DockerConfigDocument | undefined,
  registryHost: string,
): RegistryCredentials | undefined {
  const auths = doc?.auths;
  if (!auths || typeof auths !== 'object') return undefined;
  const wanted = canonicalHost(registryHost);
  const exactKeys = wanted === 'docker.io' ? [DOCKER_HUB_AUTH_KEY, registryHost] : [registryHost];
  for (const key of exactKeys) {
    const entry = Object.hasOwn(auths, key) ? auths[key] : undefined;
    const creds = entry ? decodeAuthEntry(entry) : undefined;
    if (creds) return creds;
  }
  for (const [key, entry] of Object.entries(auths)) {
    if (canonicalHost(key) !== wanted || !entry) continue;
    const creds = decodeAuthEntry(entry);
    if (creds) return creds;
  }
  return undefined;
}
