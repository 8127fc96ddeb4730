/**
 * A job's place: a builder for each platform, taken synchronously (or busy: every healthy builder
 * full) before anything is recorded, then the build recorded in the registry on its first job and
 * told of each builder it moves to. Called by the flow (build-flow.ts) as its job starts.
 */
import type { BuildRegistry, BuildReporter, NewBuild } from '../src/builds/types.js';
import type { BuildStatus } from '../src/observability/metrics.js';
import { ImageTarget } from '../src/rules/image-target.js';
import type { BuildDeps } from './build-deps.js';
import type { BuildResource } from './build-resource.js';
import type { BuilderFleet } from './builder/fleet/fleet.js';
import type { JobReuse } from './job.js';
import type { BuildPlan } from './plan/plan-types.js';
import type { BuildQueue } from './slots.js';
import type { BuildJobRunner, Submission } from './worker-types.js';

/** What every flow of one worker uses: its deps, slots, builders, records and job runner. */
export interface FlowParts {
  readonly deps: BuildDeps;
  readonly queue: BuildQueue;
  readonly fleet: BuilderFleet;
  readonly builds: BuildRegistry;
  /** Stages 2 to 9 (build-flow.ts's runBuildJob; unit tests inject a fake). */
  readonly runJob: BuildJobRunner;
  /** The commits a branch points at now (git/ls-remote.ts's remoteTip). */
  readonly remoteTip: (plan: BuildPlan, deps: BuildDeps, signal: AbortSignal) => Promise<string[]>;
  /** The build runs here under this record id (DELETE /builds/{id} finds it). */
  readonly runsHere: (id: string, resource: BuildResource) => void;
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

/** A job placed and recorded: its deps on that builder, its reporter, and how the builder is told it ended. */
export interface PlacedJob {
  readonly deps: BuildDeps;
  readonly reporter: BuildReporter;
  readonly finish: (status: BuildStatus) => void;
}

/** Places the job of `flow` on a builder, then records the build (on its first job). */
export async function placeAndRecord(
  flow: {
    readonly plan: BuildPlan;
    readonly submission: Submission;
    readonly resource: BuildResource;
    readonly parts: FlowParts;
  },
  reuse: JobReuse | undefined,
): Promise<PlacedJob> {
  const { plan, submission, resource, parts } = flow;
  const deps: BuildDeps = { ...parts.deps, logger: submission.logger };
  // Synchronously placed (or busy: every healthy builder full) before anything is recorded.
  const placement = parts.fleet.place(plan.repository, plan.branch, plan.platforms);
  const build = newBuild(submission, plan);
  const record = placement === undefined ? build : { ...build, ...placement.record() };
  const reporter = await resource.record(record).catch((err: unknown) => {
    placement?.finish('failure');
    throw err;
  });
  // A queued build's record was made before it was placed: its builder is told now.
  if (resource.bound && record.builder !== undefined) void reporter.builder(record.builder, record.builders);
  const id = await resource.id;
  if (id !== undefined) parts.runsHere(id, resource);
  reuse?.own.setBuildId(id);
  if (placement !== undefined)
    placement.onMove = (endpoint, builders) => void reporter.builder(endpoint, builders);
  return {
    deps: placement === undefined ? deps : { ...deps, remoteBuilder: placement },
    reporter,
    finish: (status) => placement?.finish(status),
  };
}
