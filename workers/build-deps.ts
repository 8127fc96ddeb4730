/**
 * What the build side receives: the slices of the application it uses, nothing more. Built once
 * by the build router at start-up (main.ts -> createApp), or by a test around fake executables.
 */
import type { Config } from '../src/config/types.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { LogStore } from '../src/logs/types.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import type { BuilderHandle } from './builder/remote-builder.js';
import type { ReuseDeps } from './reuse/reuse-step.js';

/** The configuration a build reads. */
export type BuildConfig = Pick<
  Config,
  | 'scratchDir'
  | 'childEnv'
  | 'allowInsecureGitProtocols'
  | 'sshHostKeyPolicy'
  | 'build'
  | 'builderEndpoints'
  | 'builderTls'
  | 'builderName'
  | 'dockerConfigDir'
  | 'registryAuth'
  | 'insecureRegistries'
>;

export interface BuildDeps {
  readonly config: BuildConfig;
  readonly logStore: LogStore;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Every command of a build runs in a process group tracked here. */
  readonly groups: ProcessGroups;
  /** The builder of this build (its place in the fleet), or a RemoteBuilder without endpoint. */
  readonly remoteBuilder: BuilderHandle;
  /** The build key, reuse and coalescing (used when config.build.reuse is on). */
  readonly reuse: ReuseDeps;
  /** The Dev Containers CLI, a CommonJS script run by this node (devcontainerCliBundle(); a fake in tests). */
  readonly devcontainerCli: string;
}
