/**
 * What the reuse side of a build uses (its parts are made by the worker, build-deps.ts): the
 * registry client, the in-flight map, the leases of the mode, recent inputs, the blobs the keys
 * read; and the registry access of one request drawn from them.
 */
import type { ImageTarget } from '../../src/rules/image-target.js';
import type { RegistryClient } from '../../src/registry/client.js';
import type { SupplyChain } from '../../src/supply-chain/supply-chain.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildLeases } from '../leases/leases.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import type { BlobCache } from './blob-cache.js';
import type { InFlightBuilds } from './in-flight.js';
import type { RecentInputs } from './recent-inputs.js';
import { buildAccess } from './registry-credentials.js';
import type { ReuseAccess } from './reuse-image.js';

export interface ReuseDeps {
  readonly registry: RegistryClient;
  /** Attestations and signatures of the images answered (src/supply-chain/). */
  readonly supply: SupplyChain;
  readonly inFlight: InFlightBuilds<BuildResult>;
  /** Builds with the same key on other replicas (Redis mode). */
  readonly leases: BuildLeases;
  readonly recent: RecentInputs;
  readonly blobs: BlobCache;
  /** Told the image each reuse was written from (retention counts it as served). */
  readonly reusedFrom?: (repository: ImageTarget, digest: string) => void;
}

/** The slice of the step dependencies the reuse side reads. */
export type ReuseStepDeps = Pick<StepDeps, 'config'> & { readonly reuse: ReuseDeps };

export function registryAccess(plan: BuildPlan, deps: ReuseStepDeps): ReuseAccess {
  return {
    ...buildAccess(plan, deps.reuse.registry, deps.config),
    supply: deps.reuse.supply,
    ...(deps.reuse.reusedFrom === undefined ? {} : { reusedFrom: deps.reuse.reusedFrom }),
  };
}
