/**
 * The registry access of one build: the service's client and the credentials its per-request docker
 * config (builder/docker-config.ts) gives the CLI and BuildKit, so the service's own registry calls
 * (reuse, keys, signatures) use what the build pushes with: the request's `registryCredentials` for
 * their registry, else the ambient entry, else none (src/registry/call.ts decides).
 */
import type { RegistryClient } from '../../src/registry/client.js';
import type { RegistryAccess } from '../../src/registry/call.js';
import type { Config } from '../../src/config/types.js';
import type { BuildPlan } from '../plan/plan-types.js';

export function buildAccess(
  plan: Pick<BuildPlan, 'registryCredentials'>,
  client: RegistryClient,
  config: Pick<Config, 'insecureRegistries' | 'registryAuth'>,
): RegistryAccess {
  const own = plan.registryCredentials;
  return {
    client,
    insecureRegistries: config.insecureRegistries,
    registryAuth: config.registryAuth,
    ...(own === undefined ? {} : { own }),
  };
}
