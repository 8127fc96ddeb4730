/**
 * The per-request DOCKER_CONFIG directory: a 0600 `config.json` with the ambient `auths`
 * plus this request's `registryCredentials` (which win over an ambient entry for the same
 * registry host), and symbolic links to the shared builder state (`buildx/`, where buildx keeps
 * `instances/<name>` that BUILDX_BUILDER names) and to `cli-plugins/` when the state dir has
 * one. Request credentials never reach the shared directory.
 */
import { access, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeBasicAuth } from '../../src/secrets/basic-auth.js';
import type { DockerAuthEntry, DockerConfigDocument } from '../../src/config/types.js';
import { authKeyFor, canonicalRegistryHost } from '../../src/registry/reference.js';

export interface RegistryCredential {
  readonly registry: string;
  readonly username: string;
  readonly password: string;
}

/** The merged `config.json` document (pure). */
export function requestDockerConfig(
  ambient: DockerConfigDocument,
  credentials?: RegistryCredential,
): { auths: Record<string, DockerAuthEntry> } {
  const auths: Record<string, DockerAuthEntry> = {};
  const overridden = credentials === undefined ? undefined : canonicalRegistryHost(credentials.registry);
  for (const [key, entry] of Object.entries(ambient.auths)) {
    if (overridden !== undefined && canonicalRegistryHost(key) === overridden) continue;
    auths[key] = entry;
  }
  if (credentials !== undefined) {
    // By host: a registry with a namespace path (`ghcr.io/org`) authenticates at its host.
    auths[authKeyFor(credentials.registry)] = {
      auth: encodeBasicAuth(credentials.username, credentials.password),
    };
  }
  return { auths };
}

export async function writeRequestDockerConfig(options: {
  /** The request's (empty, 0700) DOCKER_CONFIG directory. */
  dir: string;
  /** The shared builder state directory (config.dockerConfigDir). */
  stateDir: string;
  ambient: DockerConfigDocument;
  credentials?: RegistryCredential;
}): Promise<void> {
  const document = requestDockerConfig(options.ambient, options.credentials);
  await writeFile(join(options.dir, 'config.json'), `${JSON.stringify(document)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  for (const shared of ['buildx', 'cli-plugins']) {
    const target = join(options.stateDir, shared);
    const present = await access(target).then(
      () => true,
      () => false,
    );
    if (present) await symlink(target, join(options.dir, shared));
  }
}
