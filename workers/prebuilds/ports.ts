/**
 * What the prebuilds need of the rest of the service, as narrow interfaces: the builds they
 * start and cancel (the build worker behind an adapter, workers/prebuild-builds.ts), and the
 * slices of the application they read. Types only.
 */
import type { Config } from '../../src/config/types.js';
import type { ProcessGroups } from '../../src/exec/process-groups.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';
import type { DeliveryLog, PrebuildTrigger } from '../../src/prebuilds/types.js';
import type { RegistryClient } from '../../src/registry/client.js';
import type { BuildPlan } from '../plan/plan-types.js';

export interface PrebuildBuilds {
  /** Starts a build and answers once it is recorded (its id), while it runs on. */
  start(
    plan: BuildPlan,
    options: { readonly trigger: PrebuildTrigger; readonly logger: Logger },
  ): Promise<{ id: string }>;
  /** Cancels a queued or running build (a finished or unknown one is left alone). */
  cancel(id: string, reason: string): Promise<void>;
  /** Whether build `id` ended (or is no longer kept), whichever replica ran it: one record read. */
  ended(id: string): Promise<boolean>;
}

export interface PrebuildDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly groups: ProcessGroups;
  readonly builds: PrebuildBuilds;
  readonly deliveries: DeliveryLog;
  readonly registry: RegistryClient;
}
