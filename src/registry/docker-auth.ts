/**
 * Ambient registry auth lookup in a docker-config document (`{auths: {<key>: entry}}`),
 * matching keys the way the docker CLI does: a key may carry a scheme (`https://`) and a
 * path (`/v1/`); only its host[:port] counts. `docker.io`, `index.docker.io`,
 * `registry-1.docker.io` and the classic `https://index.docker.io/v1/` all mean Docker Hub.
 * Pure: no I/O.
 */
import {
  canonicalRegistryHost,
  DOCKER_HUB,
  DOCKER_HUB_AUTH_KEY,
  registryHost as hostOf,
} from './reference.js';
import { decodeBasicAuth } from '../secrets/basic-auth.js';
import type { DockerAuthEntry, DockerConfigDocument } from '../config/types.js';

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** The username and password of one entry: `auth` (base64 `user:password`) wins over the fields. */
function decodeAuthEntry(entry: DockerAuthEntry): RegistryCredentials | undefined {
  if (typeof entry.auth === 'string' && entry.auth.length > 0) {
    const decoded = decodeBasicAuth(entry.auth);
    if (decoded) return decoded;
  }
  if (typeof entry.username === 'string' && entry.username.length > 0 && typeof entry.password === 'string') {
    return { username: entry.username, password: entry.password };
  }
  return undefined;
}

/**
 * The ambient credentials for a registry, looked up by its host (`127.0.0.1:5000`,
 * `ghcr.io/org` -> `ghcr.io`, `registry-1.docker.io`), or undefined. An exact key wins over a
 * key that only matches after normalisation (scheme, path, case), like docker's lookup.
 */
export function findRegistryAuth(
  doc: DockerConfigDocument | undefined,
  registry: string,
): RegistryCredentials | undefined {
  const auths = doc?.auths;
  if (!auths || typeof auths !== 'object') return undefined;
  const host = hostOf(registry);
  const wanted = canonicalRegistryHost(host);
  const exactKeys = wanted === DOCKER_HUB ? [DOCKER_HUB_AUTH_KEY, host] : [host];
  for (const key of exactKeys) {
    const entry = Object.hasOwn(auths, key) ? auths[key] : undefined;
    const creds = entry ? decodeAuthEntry(entry) : undefined;
    if (creds) return creds;
  }
  for (const [key, entry] of Object.entries(auths)) {
    if (canonicalRegistryHost(key) !== wanted || !entry) continue;
    const creds = decodeAuthEntry(entry);
    if (creds) return creds;
  }
  return undefined;
}
