/**
 * The application context every router reads, wired once: metrics, retention, events, the build
 * worker and the prebuilds over the stores of the mode, with the listeners of a build's end, and
 * the one periodic runner of the prebuild passes and retention. The service (service.ts) and the
 * tests' app both build it here, so both run the same wiring and the same schedules.
 */
import type { BuildRegistry } from './builds/types.js';
import type { Config } from './config/types.js';
import { AccessControl, type AccessDeps } from './auth/access.js';
import { EventService } from './events/events.js';
import type { ProcessGroups } from './exec/process-groups.js';
import type { AppContext } from './http/context.js';
import type { ErrorTracker } from './observability/error-tracker.js';
import type { Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { Retention } from './retention/retention.js';
import { retentionPasses } from './retention/schedule.js';
import type { ScheduledPass } from './prebuilds/schedule-lock.js';
import { PeriodicRunner } from './schedules.js';
import type { Stores } from './stores.js';
import { Usage } from './usage/usage.js';
import { BuildWorker, type BuildWorkerOptions } from '../workers/build-worker.js';
import { createPrebuilds } from '../workers/prebuilds-start.js';

/** How often an instance asks the schedule lock (and its holder renews it). */
const SCHEDULE_TICK_MS = 3_000;

export interface ContextParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly errorTracker: ErrorTracker;
  readonly stores: Stores;
  readonly processGroups: ProcessGroups;
  readonly shutdownSignal: AbortSignal;
  /** Whether the process is shutting down (readiness answers 503 from then on). */
  readonly shuttingDown?: () => boolean;
  /** Tests only: a build registry of their own, the worker's job runner. */
  readonly builds?: BuildRegistry;
  readonly worker?: BuildWorkerOptions;
}

/**
 * The context, the events the caller closes beside the server, and the stop of the schedules
 * (resolves once no pass runs).
 */
export function createContext(parts: ContextParts): {
  ctx: AppContext;
  events: EventService;
  stopSchedules: () => Promise<void>;
} {
  const { config, logger, stores, shutdownSignal } = parts;
  const metrics = new Metrics();
  const retention = new Retention({
    ...config,
    settings: config.retention,
    store: stores.served,
    metrics,
    logger,
  });
  const events = new EventService({
    ...{ config, ...stores.events, metrics: metrics.events, logger, shutdownSignal },
  }).start();
  // The usage per tenant (docs/usage.md): counted at each build's end, its budgets asked before a build.
  const usage = createUsage(parts, metrics, events);
  const shared = {
    buildAllowed: (repository: string) => usage.refuseOverBudget(repository),
    config,
    logger,
    metrics,
    retention,
    logStore: stores.logStore,
    builds: parts.builds ?? stores.builds,
    leases: stores.leases,
    secretIdentityKey: stores.secretIdentityKey,
    processGroups: parts.processGroups,
    shutdownSignal,
  };
  const buildWorker = new BuildWorker(
    { ...shared, queue: stores.queue, reuseSourceServed: (repo, digest) => retention.served(repo, [digest]) },
    parts.worker,
  );
  // Each build's end: its events recorded, what it answered counted as served (docs/events.md), its usage.
  for (const listener of [events.onBuildEnded, retention.servedOnAnswer, usage.onBuildEnded])
    buildWorker.onBuildEnded(listener);
  // Each image a retention run deletes: an image.deleted event.
  retention.onImageDeleted(events.emitImageDeleted);
  const prebuilds = createPrebuilds(shared, buildWorker);
  const access = accessControl(config, stores, { logger, metrics, audited: events.emitAccessDecided });
  const ctx: AppContext = {
    ...shared,
    ...(stores.sharedStoreProbe === undefined ? {} : { sharedStoreProbe: stores.sharedStoreProbe }),
    ...(parts.shuttingDown === undefined ? {} : { shuttingDown: parts.shuttingDown }),
    errorTracker: parts.errorTracker,
    access,
    events,
    buildWorker,
    usage,
    prebuilds: prebuilds.prebuilds,
  };
  shutdownSignal.addEventListener('abort', () => retention.client.close(), { once: true });
  const passes = [...prebuilds.passes, ...retentionPasses(retention, config.retention)];
  return { ctx, events, stopSchedules: startSchedules(passes, parts) };
}

/** Caller identity over the mode's sessions; each decision kept is also an access.decided event (docs/auth.md). */
function accessControl(
  config: Config,
  stores: Stores,
  deps: Pick<AccessDeps, 'logger' | 'metrics' | 'audited'>,
): AccessControl {
  return new AccessControl(config.auth, { ...deps, sessions: stores.sessions });
}

/** The usage meter and budgets (docs/usage.md), fed once per ended build. */
function createUsage(parts: ContextParts, metrics: Metrics, events: EventService): Usage {
  const { config, stores, logger } = parts;
  return new Usage({
    store: stores.usage,
    settings: { quotas: config.build.quotas, metricTenants: config.usage.metricTenants },
    metrics,
    logger,
    budgetCrossed: events.emitBudget,
  });
}

/** The periodic runner of `passes` on the holder of the schedule lock; its stop (none without a pass). */
function startSchedules(passes: readonly ScheduledPass[], parts: ContextParts): () => Promise<void> {
  if (passes.length === 0) return () => Promise.resolve();
  const runner = new PeriodicRunner(parts.stores.scheduleLock, passes, parts.logger);
  runner.start(SCHEDULE_TICK_MS, parts.shutdownSignal);
  return () => runner.stop();
}
