import type { AccessControl } from '../auth/access.js';
import type { BuildRegistry } from '../builds/types.js';
import type { Config } from '../config/types.js';
import type { EventService } from '../events/events.js';
import type { ProcessGroups } from '../exec/process-groups.js';
import type { LogStore } from '../logs/types.js';
import type { ErrorTracker } from '../observability/error-tracker.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { BuildWorker } from '../../workers/build-worker.js';
import type { Retention } from '../retention/retention.js';
import type { Delivery, Forge, PushEvent } from '../prebuilds/types.js';
import type { Usage } from '../usage/usage.js';

/** What the webhook routes use of the prebuilds (workers/prebuilds). */
interface PrebuildHooks {
  /** Decides on a signed push: builds, or says why not. */
  push(event: PushEvent, logger: Logger): Promise<Delivery>;
  /** Records a refused delivery (bad signature). */
  refuse(forge: Forge, reason: string): Promise<Delivery>;
  deliveries(): Promise<Delivery[]>;
}

/** What the HTTP layer uses: built once by src/service.ts (or a test) and passed down. */
export interface AppContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly logStore: LogStore;
  /** The builds this instance runs and the newest finished ones (GET /builds). */
  readonly builds: BuildRegistry;
  readonly errorTracker: ErrorTracker;
  /** Caller identity and access rules (docs/auth.md): every route but probes, metrics and hooks asks it. */
  readonly access: AccessControl;
  /** The process groups of running commands (killed if the service exits). */
  readonly processGroups: ProcessGroups;
  /** Aborted when the process must stop now (second signal, end of grace): running commands are killed. */
  readonly shutdownSignal: AbortSignal;
  /** The build worker: POST /build hands it plans; readiness asks it for its builders' states. */
  /** Image retention (docs/retention.md): its plan, its runs, and what was served. */
  readonly retention?: Retention;
  /** The prebuilds (absent: the webhook routes answer 404). */
  readonly prebuilds?: PrebuildHooks;
  /** Events and their deliveries (GET /events/deliveries); absent: none are sent. */
  readonly events?: Pick<EventService, 'deliveries'>;
  readonly buildWorker: Pick<
    BuildWorker,
    'submit' | 'start' | 'cancel' | 'attach' | 'attached' | 'answerOf' | 'refused'
  > &
    Partial<Pick<BuildWorker, 'queuePositions'>> &
    Partial<Pick<BuildWorker, 'builders' | 'drained' | 'stopTaking' | 'handBack'>>;
  /** The usage per tenant and its budgets (GET /usage, docs/usage.md); absent: GET /usage answers 404. */
  readonly usage?: Pick<Usage, 'report' | 'budgetOf'>;
  /** Redis mode: whether the shared store answers now (readiness fails when it does not). */
  readonly sharedStoreProbe?: () => Promise<boolean>;
  /** Whether the process is shutting down (SIGTERM): readiness fails first, before the listener closes. */
  readonly shuttingDown?: () => boolean;
}
