/**
 * Stage 1 of a build, admit (workers/stages/table.ts): the secrets' identity, a builder for each
 * platform (or 400/503), an identical build in flight to follow, else a slot (or 429), a place on
 * a builder (or 429) and the build's record. A refusal is made here, where it is decided
 * (busy.ts), once; the record's id is known from here on. Called by the flow (build-flow.ts).
 */
import type { BuildRegistry, BuildReporter, NewBuild } from '../../src/builds/types.js';
import type { BuildStatus } from '../../src/observability/metrics.js';
import { ImageTarget } from '../../src/rules/image-target.js';
import type { BuildDeps } from '../job/build-deps.js';
import type { BuildResource } from './build-resource.js';
import type { BuilderFleet } from '../builder/fleet/fleet.js';
import { withSecretsIdentity } from '../builder/secret-identity.js';
import { busyAnswer } from './busy.js';
import type { JobReuse } from '../job/job.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { BuildQueue, Reservation } from '../queue/slots.js';
import type { BuildLaps } from '../stages/laps.js';
import type { BuildJobRunner, Submission } from './worker-types.js';

/** What every flow of one worker uses: its deps, slots, builders, records. */
export interface FlowParts {
  readonly deps: BuildDeps;
  readonly queue: BuildQueue;
  readonly fleet: BuilderFleet;
  readonly builds: BuildRegistry;
  /** Replaces the job's stages in unit tests of the HTTP layer (absent: the flow's own). */
  readonly runJob?: BuildJobRunner | undefined;
  /** The commits a branch points at now (git/ls-remote.ts's remoteTip). */
  readonly remoteTip: (plan: BuildPlan, deps: BuildDeps, signal: AbortSignal) => Promise<string[]>;
}

/** One request's build: its plan as submitted, the request, its record, and the worker's parts. */
export interface Flow {
  readonly plan: BuildPlan;
  readonly submission: Submission;
  readonly resource: BuildResource;
  readonly parts: FlowParts;
}

/** A flow under way: aborted when its last waiter has gone or it is cancelled; its laps. */
export interface Started extends Flow {
  readonly signal: AbortSignal;
  readonly laps: BuildLaps;
}

/** The record a submission starts with. */
export function newBuild(submission: Omit<Submission, 'signal'>, plan: BuildPlan): NewBuild {
  return {
    requestId: submission.requestId,
    ...(submission.trigger === undefined ? {} : { trigger: submission.trigger }),
    ...(submission.idempotency === undefined ? {} : { idempotencyKey: submission.idempotency.key }),
    ...(submission.requestedBy === undefined ? {} : { requestedBy: submission.requestedBy }),
    repository: plan.repository,
    ...(plan.branch === undefined ? {} : { branch: plan.branch }),
    image: ImageTarget.of(plan.image).image,
  };
}

/** The plan keyed by the secrets it offers; throws when no builder can build its platforms. */
export async function identified(flow: Started): Promise<BuildPlan> {
  const plan = await withSecretsIdentity(flow.plan, flow.parts.deps.secretIdentityKey);
  flow.parts.fleet.refuse(plan.platforms);
  return plan;
}

/** A job admitted: its slot, its deps on its builder, its record's reporter and id. */
export interface PlacedJob {
  readonly slot: Reservation;
  readonly deps: BuildDeps;
  readonly reporter: BuildReporter;
  /** The build's record id (undefined when the registry could not record it). */
  readonly id: string | undefined;
  /** Tells the builder how the job ended. */
  readonly finish: (status: BuildStatus) => void;
}

/**
 * A slot (the one reserved for the request first) and a place on a builder, both taken
 * synchronously, then the build recorded (on its first job; a queued build's record told its
 * builder). Throws the 429 of a build refused for want of either. O(builders).
 */
export async function placeAndRecord(
  flow: Started,
  plan: BuildPlan,
  reserved: Reservation | undefined,
  reuse: JobReuse | undefined,
): Promise<PlacedJob> {
  const { submission, resource, parts } = flow;
  const busy = { config: parts.deps.config, builds: parts.builds, queue: parts.queue };
  const slot = reserved ?? parts.queue.reserve();
  if (slot === undefined) throw await busyAnswer(busy, plan, submission.logger, true);
  let placement;
  try {
    placement = parts.fleet.place(plan.repository, plan.branch, plan.platforms);
  } catch (err) {
    slot.release();
    throw err;
  }
  if (placement === 'full') {
    slot.release();
    throw await busyAnswer(busy, plan, submission.logger, false);
  }
  const build = newBuild(submission, plan);
  const record = placement === undefined ? build : { ...build, ...placement.record() };
  const reporter = await resource.record(record).catch((err: unknown) => {
    placement?.finish('failure');
    slot.release();
    throw err;
  });
  if (resource.bound && record.builder !== undefined) void reporter.builder(record.builder, record.builders);
  flow.laps.recorded(reporter, 'cloning');
  const id = resource.recordId;
  reuse?.own.setBuildId(id);
  if (placement !== undefined)
    placement.onMove = (endpoint, builders) => void reporter.builder(endpoint, builders);
  const deps: BuildDeps = { ...parts.deps, logger: submission.logger };
  return {
    slot,
    deps: placement === undefined ? deps : { ...deps, remoteBuilder: placement },
    reporter,
    id,
    finish: (status) => placement?.finish(status),
  };
}
