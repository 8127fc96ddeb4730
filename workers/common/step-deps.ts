/**
 * What every step of a build (git, builder, reuse) receives: slices of the application, nothing
 * more. The worker adds its own parts (workers/job/build-deps.ts); a test passes fakes.
 */
import type { Config } from '../../src/config/types.js';
import type { ProcessGroups } from '../../src/exec/process-groups.js';
import type { LogStore } from '../../src/logs/types.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';

/** The configuration a build reads. */
export type BuildConfig = Pick<
  Config,
  | 'scratchDir'
  | 'childEnv'
  | 'git'
  | 'sshHostKeyPolicy'
  | 'build'
  | 'builders'
  | 'builderTls'
  | 'builderName'
  | 'dockerConfigDir'
  | 'registryAuth'
  | 'insecureRegistries'
>;

export interface StepDeps {
  readonly config: BuildConfig;
  readonly logStore: LogStore;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Every command of a build runs in a process group tracked here. */
  readonly groups: ProcessGroups;
  /** The Dev Containers CLI, a CommonJS script run by this node (devcontainerCliBundle(); a fake in tests). */
  readonly devcontainerCli: string;
}
