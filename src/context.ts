/**
 * The application context every router reads, wired once: metrics, retention, events, the build
 * worker and the prebuilds over the stores of the mode, with the listeners of a build's end. The
 * service (service.ts) and the tests' app both build it here, so both run the same wiring.
 */
import type { BuildRegistry } from './builds/types.js';
import type { Config } from './config/types.js';
import { AccessControl } from './auth/access.js';
import { EventService } from './events/events.js';
import type { ProcessGroups } from './exec/process-groups.js';
import type { AppContext } from './http/context.js';
import type { ErrorTracker } from './observability/error-tracker.js';
import type { Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { Retention } from './retention/retention.js';
import type { Stores } from './stores.js';
import { BuildWorker, type BuildWorkerOptions } from '../workers/build-worker.js';
import { createPrebuilds } from '../workers/prebuilds-start.js';

export interface ContextParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly errorTracker: ErrorTracker;
  readonly stores: Stores;
  readonly processGroups: ProcessGroups;
  readonly shutdownSignal: AbortSignal;
  /** Tests only: a build registry of their own, the worker's job runner. */
  readonly builds?: BuildRegistry;
  readonly worker?: BuildWorkerOptions;
}

/**
 * The context, the two parts the caller starts and stops beside the server, and the stop of the
 * prebuild schedules (resolves once no pass runs).
 */
export function createContext(parts: ContextParts): {
  ctx: AppContext;
  retention: Retention;
  events: EventService;
  stopPrebuilds: () => Promise<void>;
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
    config,
    ...stores.events,
    metrics: metrics.events,
    logger,
    shutdownSignal,
  }).start();
  const shared = {
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
  // Each build's end: its events recorded, what it answered counted as served (docs/events.md).
  buildWorker.onBuildEnded(events.onBuildEnded);
  buildWorker.onBuildEnded(retention.servedOnAnswer);
  // Each image a retention run deletes: an image.deleted event.
  retention.onImageDeleted(events.emitImageDeleted);
  const prebuilds = createPrebuilds(shared, buildWorker, stores.scheduleLock);
  // The audit trail: each decision kept is also an access.decided event (docs/auth.md).
  const access = new AccessControl(config.auth, { logger, metrics, audited: events.emitAccessDecided });
  const ctx: AppContext = {
    ...shared,
    ...(stores.sharedStoreProbe === undefined ? {} : { sharedStoreProbe: stores.sharedStoreProbe }),
    errorTracker: parts.errorTracker,
    access,
    events,
    buildWorker,
    prebuilds: prebuilds.prebuilds,
  };
  return { ctx, retention, events, stopPrebuilds: prebuilds.stop };
}
