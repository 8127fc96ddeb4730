/**
 * The prebuilds of one service instance, made by the composition root (src/service.ts, or a
 * test's app): the deliveries, a registry client of their own, and the adapter that starts
 * their builds through the build worker.
 */
import type { BuildRegistry } from '../src/builds/types.js';
import type { Config } from '../src/config/types.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import { MemoryDeliveryLog } from '../src/prebuilds/deliveries.js';
import { RegistryClient } from '../src/registry/client.js';
import type { BuildWorker } from './build-worker.js';
import { WorkerPrebuildBuilds } from './prebuild-builds.js';
import { Prebuilds } from './prebuilds/prebuilds.js';

export interface PrebuildsContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly builds: BuildRegistry;
  readonly processGroups: ProcessGroups;
  readonly shutdownSignal: AbortSignal;
}

export function createPrebuilds(ctx: PrebuildsContext, worker: Pick<BuildWorker, 'submit'>): Prebuilds {
  const registry = new RegistryClient({ insecureRegistries: ctx.config.insecureRegistries });
  ctx.shutdownSignal.addEventListener('abort', () => registry.close(), { once: true });
  const builds = new WorkerPrebuildBuilds(worker, ctx.builds, ctx.logger);
  const prebuilds = new Prebuilds({
    config: ctx.config,
    logger: ctx.logger,
    metrics: ctx.metrics,
    groups: ctx.processGroups,
    builds,
    deliveries: new MemoryDeliveryLog(),
    registry,
  });
  builds.ended = prebuilds.ended;
  return prebuilds;
}
