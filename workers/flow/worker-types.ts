/**
 * What the build worker and its parts share: what they use of the application, the worker's
 * options, and how a plan is started (the request it came with). Types only.
 */
import type { BuildRegistry, BuildReporter, BuildTrigger } from '../../src/builds/types.js';
import type { Config } from '../../src/config/types.js';
import type { ProcessGroups } from '../../src/exec/process-groups.js';
import type { LogStore } from '../../src/logs/types.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';
import type { QueueStore } from '../../src/queue/types.js';
import type { RequestedBy } from '../../src/rules/caller.js';
import type { ImageTarget } from '../../src/rules/image-target.js';
import type { JobReuse } from '../job/job.js';
import type { BuildLeases } from '../leases/leases.js';
import type { BuildDeps } from '../job/build-deps.js';
import type { Probe } from '../builder/fleet/probe.js';
import type { SecretIdentityKey } from '../builder/secret-identity-key.js';
import type { HeldKey } from './idempotency.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { BuildQueue, Reservation } from '../queue/slots.js';
import type { JobOutcome } from '../reuse/decision.js';
import type { BuildLaps } from '../stages/laps.js';

export type BuildJobRunner = (
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
  laps?: BuildLaps,
) => Promise<JobOutcome>;

/** What the worker uses of the application. */
export interface BuildWorkerContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly logStore: LogStore;
  readonly builds: BuildRegistry;
  readonly leases: BuildLeases;
  readonly processGroups: ProcessGroups;
  /** The build secrets identity key (absent: the scratch space's, builder/secret-identity-key.ts). */
  readonly secretIdentityKey?: SecretIdentityKey;
  /** Aborted when the process must stop now: the worker's registry client closes. */
  readonly shutdownSignal: AbortSignal;
  /** Told the source image of each reuse (retention's "served", docs/retention.md). */
  readonly reuseSourceServed?: (repository: ImageTarget, digest: string) => void;
  /** Refuses a build about to run BuildKit when its tenant is past its budget (docs/usage.md). */
  readonly buildAllowed?: (repository: string) => Promise<void>;
  /** The shared queue (Redis mode; default: this instance's, in memory) and this replica's name. */
  readonly queue?: { readonly store: QueueStore; readonly replica: string } | undefined;
}

export interface BuildWorkerOptions {
  /** The job in its slot (default: job-flow.ts's stages); unit tests of the HTTP layer inject a fake. */
  readonly runJob?: BuildJobRunner;
  /** The queue (default: one per worker, sized by config.build.maxConcurrent). */
  readonly queue?: BuildQueue;
  /** The builders' health probe (default: HTTP/2 PING, fleet/probe.ts). */
  readonly probe?: Probe;
}

/** How a plan is started: the request it came with. */
export interface StartOptions {
  readonly requestId: string;
  /** The request's logger (carries its id). */
  readonly logger: Logger;
  readonly trigger?: BuildTrigger;
  /** Reserved with `attach` (which found no build to attach to): bound to the build's id. */
  readonly idempotency?: HeldKey;
  /** Who asked, when identities are enforced (kept in the build's record). */
  readonly requestedBy?: RequestedBy;
  /** The tenant of its quotas and turn in the queue (default: the repository's owner, docs/queue.md). */
  readonly tenant?: string;
}

/** One submitted plan, waited for by its request. */
export interface Submission extends StartOptions {
  /** Aborted when the client goes away: the build is cancelled (when it is its last waiter). */
  readonly signal: AbortSignal;
  /** The slot held for it (a build taken from the queue, or an async one started at once). */
  readonly reservation?: Reservation;
}
