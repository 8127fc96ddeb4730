/**
 * The registry credentials a build uses for one registry, as its per-request docker config
 * (builder/docker-config.ts) gives them to the CLI and BuildKit: the request's
 * `registryCredentials` when they name that registry, else the ambient entry, else none.
 * Pure.
 */
import { findRegistryAuth, type RegistryCredentials } from '../../src/registry/docker-auth.js';
import type { DockerConfigDocument } from '../../src/config/types.js';
import { canonicalRegistryHost, type ImageReference } from '../../src/registry/reference.js';
import type { BuildPlan } from '../plan/plan-types.js';

export type CredentialsFor = (ref: ImageReference) => RegistryCredentials | undefined;

export function buildCredentials(
  plan: Pick<BuildPlan, 'registryCredentials'>,
  ambient: DockerConfigDocument,
): CredentialsFor {
  return (ref) => {
    const own = plan.registryCredentials;
    if (own !== undefined) {
      const host = canonicalRegistryHost(own.registry);
      if (host === canonicalRegistryHost(ref.registry) || host === canonicalRegistryHost(ref.host)) {
        return { username: own.username, password: own.password };
      }
    }
    return findRegistryAuth(ambient, ref.registry) ?? findRegistryAuth(ambient, ref.host);
  };
}
