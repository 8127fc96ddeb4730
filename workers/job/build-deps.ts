/**
 * What a build job receives: the steps' slices of the application (common/step-deps.ts) and the
 * worker's own parts, among them the reuse side it wires here (createReuseDeps). Built once by
 * the build worker (src/service.ts makes it), or by a test.
 */
import type { Config } from '../../src/config/types.js';
import type { ImageTarget } from '../../src/rules/image-target.js';
import type { BuildLeases } from '../leases/leases.js';
import { RegistryClient } from '../../src/registry/client.js';
import { supplyChainOf, type SupplyChain } from '../../src/supply-chain/supply-chain.js';
import { devcontainerCliBundle } from '../builder/devcontainer-build.js';
import { RemoteBuilder } from '../builder/remote-builder.js';
import { scratchIdentityKey, type SecretIdentityKey } from '../builder/secret-identity-key.js';
import type { BuilderHandle } from '../builder/remote-builder.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildResult } from '../plan/plan-types.js';
import { BlobCache } from '../reuse/blob-cache.js';
import { createInProcessInFlight } from '../reuse/in-flight.js';
import { RecentInputs } from '../reuse/recent-inputs.js';
import type { ReuseDeps } from '../reuse/reuse-deps.js';

export interface BuildDeps extends StepDeps {
  /** The key of the build secrets' identity (builder/secret-identity-key.ts), used once per build. */
  readonly secretIdentityKey: SecretIdentityKey;
  /** The builder of this build (its place in the fleet), or a RemoteBuilder without endpoint. */
  readonly remoteBuilder: BuilderHandle;
  /** The build key, reuse and following (used when config.build.reuse is on). */
  readonly reuse: ReuseDeps;
  /** Throws 429 TENANT_BUDGET when the repository's tenant is past its budget (docs/usage.md). */
  readonly buildAllowed?: (repository: string) => Promise<void>;
}

/** What the worker's build dependencies are made of. */
export interface BuildDepsContext {
  readonly config: Config;
  readonly logStore: StepDeps['logStore'];
  readonly logger: StepDeps['logger'];
  readonly metrics: StepDeps['metrics'];
  readonly processGroups: StepDeps['groups'];
  readonly leases: BuildLeases;
  readonly secretIdentityKey?: SecretIdentityKey;
  readonly reuseSourceServed?: (repository: ImageTarget, digest: string) => void;
  readonly buildAllowed?: (repository: string) => Promise<void>;
}

/** The build dependencies of one worker. */
export function createBuildDeps(ctx: BuildDepsContext): BuildDeps {
  return {
    config: ctx.config,
    logStore: ctx.logStore,
    logger: ctx.logger,
    metrics: ctx.metrics,
    groups: ctx.processGroups,
    // Without builders: a build's builder is this (nothing to set up, no BUILDX_BUILDER).
    remoteBuilder: new RemoteBuilder(ctx.config, undefined, ctx.processGroups),
    devcontainerCli: devcontainerCliBundle(),
    secretIdentityKey: ctx.secretIdentityKey ?? scratchIdentityKey(ctx.config.scratchDir),
    reuse: createReuseDeps(
      ctx.config.insecureRegistries,
      ctx.leases,
      supplyChainOf(ctx.config),
      ctx.reuseSourceServed,
    ),
    ...(ctx.buildAllowed === undefined ? {} : { buildAllowed: ctx.buildAllowed }),
  };
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
    recent: new RecentInputs(leases.recent),
    blobs: new BlobCache(),
  };
}
