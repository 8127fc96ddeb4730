/**
 * What a build job receives: the steps' slices of the application (common/step-deps.ts) and the
 * worker's own parts, among them the reuse side it wires here (createReuseDeps). Built once by
 * the build worker (src/service.ts makes it), or by a test.
 */
import type { ImageTarget } from '../src/rules/image-target.js';
import type { BuildLeases } from './leases/leases.js';
import { RegistryClient } from '../src/registry/client.js';
import type { SupplyChain } from '../src/supply-chain/supply-chain.js';
import type { BuilderHandle } from './builder/remote-builder.js';
import type { StepDeps } from './common/step-deps.js';
import type { BuildResult } from './plan/plan-types.js';
import { BlobCache } from './reuse/blob-cache.js';
import { createInProcessInFlight } from './reuse/in-flight.js';
import { RecentInputs } from './reuse/recent-inputs.js';
import type { ReuseDeps } from './reuse/reuse-deps.js';

export interface BuildDeps extends StepDeps {
  /** The builder of this build (its place in the fleet), or a RemoteBuilder without endpoint. */
  readonly remoteBuilder: BuilderHandle;
  /** The build key, reuse and following (used when config.build.reuse is on). */
  readonly reuse: ReuseDeps;
}

/**
 * The reuse side of one worker: its registry client, the in-process in-flight map, the leases of
 * the mode (src/stores.ts), recent inputs, the blobs the keys read.
 */
export function createReuseDeps(
  insecureRegistries: readonly string[],
  leases: BuildLeases,
  supply: SupplyChain,
  reusedFrom?: (repository: ImageTarget, digest: string) => void,
): ReuseDeps {
  return {
    ...(reusedFrom === undefined ? {} : { reusedFrom }),
    registry: new RegistryClient({ insecureRegistries }),
    supply,
    inFlight: createInProcessInFlight<BuildResult>(),
    leases,
    recent: new RecentInputs(),
    blobs: new BlobCache(),
  };
}
