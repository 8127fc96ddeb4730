/**
 * The prebuilds of one service instance, made with the application context (src/context.ts, for
 * the service and the tests' app alike): the deliveries, a registry client of their own, the
 * adapter that starts their builds through the build worker, and their scheduled passes.
 */
import type { BuildRegistry } from '../src/builds/types.js';
import type { Config } from '../src/config/types.js';
import type { ProcessGroups } from '../src/exec/process-groups.js';
import type { Logger } from '../src/observability/logger.js';
import type { Metrics } from '../src/observability/metrics.js';
import { MemoryDeliveryLog } from '../src/prebuilds/deliveries.js';
import { RegistryClient } from '../src/registry/client.js';
import type { BuildWorker } from './build-worker.js';
import { WorkerPrebuildBuilds } from './prebuilds/worker-builds.js';
import { Prebuilds } from './prebuilds/prebuilds.js';
import { remoteBranchListing } from './prebuilds/branch-listing.js';
import { Reconciler } from './prebuilds/reconcile.js';
import { Refresher } from './prebuilds/refresh.js';
import { BranchImageCommits } from './prebuilds/branch-commits.js';
import type { ScheduledPass } from '../src/prebuilds/schedule-lock.js';

export interface PrebuildsContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly builds: BuildRegistry;
  readonly processGroups: ProcessGroups;
  readonly shutdownSignal: AbortSignal;
}

/**
 * The prebuilds, told of every build's end, and their scheduled passes (reconcile, refresh; none
 * without a configuration), which the service's periodic runner runs (src/schedules.ts).
 */
export function createPrebuilds(
  ctx: PrebuildsContext,
  worker: Pick<BuildWorker, 'start' | 'cancel' | 'record' | 'onBuildEnded'>,
): { prebuilds: Prebuilds; passes: ScheduledPass[] } {
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
  if (ctx.config.prebuilds.configurations.length === 0) return { prebuilds, passes: [] };
  return { prebuilds, passes: scheduledPasses(ctx, prebuilds, registry) };
}

/** Reconcile then refresh, one after the other (they never overlap), each at once on taking the lock. */
function scheduledPasses(
  ctx: PrebuildsContext,
  prebuilds: Prebuilds,
  registry: RegistryClient,
): ScheduledPass[] {
  const deps = { config: ctx.config, groups: ctx.processGroups, registry, logger: ctx.logger };
  const { reconcileIntervalSeconds, refreshIntervalSeconds } = ctx.config.prebuilds;
  // A refresh takes the branches of a reconcile read within the reconcile interval.
  const listing = remoteBranchListing(prebuilds, deps, reconcileIntervalSeconds * 1000);
  const commits = new BranchImageCommits(() => prebuilds.tagAccess);
  const reconciler = new Reconciler(prebuilds, listing, commits);
  const refresher = new Refresher(prebuilds, listing, commits, deps);
  const lane = 'prebuilds';
  return [
    {
      name: 'reconcile',
      lane,
      atOnce: true,
      intervalMs: reconcileIntervalSeconds * 1000,
      run: (l: Logger) => reconciler.pass(l),
    },
    {
      name: 'refresh',
      lane,
      atOnce: true,
      intervalMs: refreshIntervalSeconds * 1000,
      run: (l: Logger) => refresher.pass(l),
    },
  ];
}
