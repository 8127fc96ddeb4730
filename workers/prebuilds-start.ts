/**
 * The prebuilds of one service instance, made with the application context (src/context.ts, for
 * the service and the tests' app alike): the deliveries, a registry client of their own, and the
 * adapter that starts their builds through the build worker.
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
import { Reconciler } from './prebuilds/reconcile.js';
import { Refresher } from './prebuilds/refresh.js';
import { PrebuildSchedule } from './prebuilds/schedule.js';
import type { ScheduleLock } from '../src/prebuilds/schedule-lock.js';

/** How often an instance asks the schedule lock (and its holder renews it). */
const SCHEDULE_TICK_MS = 3_000;

export interface PrebuildsContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly builds: BuildRegistry;
  readonly processGroups: ProcessGroups;
  readonly shutdownSignal: AbortSignal;
}

/**
 * The prebuilds, told of every build's end; their schedules start when any configuration is set.
 * `stop` ends the schedules and resolves once no pass runs any more.
 */
export function createPrebuilds(
  ctx: PrebuildsContext,
  worker: Pick<BuildWorker, 'start' | 'cancel' | 'onBuildEnded'>,
  lock: ScheduleLock,
): { prebuilds: Prebuilds; stop: () => Promise<void> } {
  const registry = new RegistryClient({ insecureRegistries: ctx.config.insecureRegistries });
  ctx.shutdownSignal.addEventListener('abort', () => registry.close(), { once: true });
  const builds = new WorkerPrebuildBuilds(worker, ctx.logger);
  const prebuilds = new Prebuilds({
    config: ctx.config,
    logger: ctx.logger,
    metrics: ctx.metrics,
    groups: ctx.processGroups,
    builds,
    deliveries: new MemoryDeliveryLog(),
    registry,
  });
  worker.onBuildEnded(prebuilds.ended);
  if (ctx.config.prebuilds.configurations.length === 0) return { prebuilds, stop: async () => undefined };
  const scheduled = schedule(ctx, prebuilds, registry, lock);
  return { prebuilds, stop: () => scheduled.stop() };
}

function schedule(
  ctx: PrebuildsContext,
  prebuilds: Prebuilds,
  registry: RegistryClient,
  lock: ScheduleLock,
): PrebuildSchedule {
  const deps = { config: ctx.config, groups: ctx.processGroups, registry, logger: ctx.logger };
  const reconciler = new Reconciler(prebuilds, deps);
  const refresher = new Refresher(prebuilds, deps);
  const { reconcileIntervalSeconds, refreshIntervalSeconds } = ctx.config.prebuilds;
  const passes = [
    {
      name: 'reconcile' as const,
      intervalMs: reconcileIntervalSeconds * 1000,
      run: (l: Logger) => reconciler.pass(l),
    },
    {
      name: 'refresh' as const,
      intervalMs: refreshIntervalSeconds * 1000,
      run: (l: Logger) => refresher.pass(l),
    },
  ];
  const scheduled = new PrebuildSchedule(lock, passes, ctx.logger);
  scheduled.start(SCHEDULE_TICK_MS, ctx.shutdownSignal);
  return scheduled;
}
