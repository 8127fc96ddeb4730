/**
 * A request's admission (admit.ts) as the worker wires it: its slot, its follow check, and its
 * job, placed on a builder synchronously (or busy) before anything is recorded, then recorded in
 * the registry on its first job and told of each builder it moves to.
 */
import type { BuildReporter, NewBuild } from '../src/builds/types.js';
import { ImageTarget } from '../src/rules/image-target.js';
import type { Admission, JobReuse } from './admit.js';
import { failureStatus } from './answer.js';
import type { BuildDeps } from './build-deps.js';
import type { BuildResource } from './build-resource.js';
import type { BuilderFleet, Placement } from './builder/fleet/fleet.js';
import { remoteTip } from './git/ls-remote.js';
import type { BuildPlan } from './plan/plan-types.js';
import type { BuildQueue, Reservation } from './queue.js';
import type { JobOutcome } from './reuse/decision.js';
import type { BuildJobRunner, Submission } from './worker-types.js';

export interface PlacementParts {
  readonly deps: BuildDeps;
  readonly queue: BuildQueue;
  readonly fleet: BuilderFleet;
  readonly runJob: BuildJobRunner;
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

/** `queue` whose next job takes `slot` (later jobs of the same build wait for none). */
function withSlot(queue: BuildQueue, slot: Reservation | undefined): BuildQueue {
  if (slot === undefined) return queue;
  return {
    get inFlight() {
      return queue.inFlight;
    },
    capacity: queue.capacity,
    reserve: () => queue.reserve(),
    onFree: (listener) => queue.onFree(listener),
    run: (job, options = {}) => queue.run(job, { ...options, reservation: slot }),
  };
}

export function admissionOf(
  parts: PlacementParts,
  plan: BuildPlan,
  submission: Submission,
  resource: BuildResource,
): Admission {
  const deps: BuildDeps = { ...parts.deps, logger: submission.logger };
  const build = newBuild(submission, plan);
  const { config } = deps;
  return {
    queue: withSlot(parts.queue, submission.reservation),
    deps,
    deadlineSeconds: config.build.cloneTimeoutSeconds + config.build.timeoutSeconds,
    refusePlatforms: () => parts.fleet.refuse(plan.platforms),
    remoteTip: (p, signal) => remoteTip(p, deps, signal),
    cancelSignal: resource.signal,
    followed: (buildId) => void buildId.then((id) => resource.follow(id)),
    job: (signal, reuse) => {
      // Synchronously placed (or busy: every healthy builder full) before anything is recorded.
      const placement = parts.fleet.place(plan.repository, plan.branch, plan.platforms);
      const placed = placement === undefined ? deps : { ...deps, remoteBuilder: placement };
      const record = placement === undefined ? build : { ...build, ...placement.record() };
      return runPlaced(parts, { build: record, resource, reuse, placement }, (reporter) =>
        parts.runJob(plan, placed, signal, reporter, reuse),
      );
    },
  };
}

/** Runs an admitted job on its placement, the build recorded in the registry on its first job. */
async function runPlaced(
  parts: PlacementParts,
  placed: {
    readonly build: NewBuild;
    readonly resource: BuildResource;
    readonly reuse: JobReuse | undefined;
    readonly placement: Placement | undefined;
  },
  job: (reporter: BuildReporter) => Promise<JobOutcome>,
): Promise<JobOutcome> {
  const { build, resource, reuse, placement } = placed;
  const reporter = await resource.record(build).catch((err: unknown) => {
    placement?.finish('failure');
    throw err;
  });
  // A queued build's record was made before it was placed: its builder is told now.
  if (resource.bound && build.builder !== undefined) void reporter.builder(build.builder, build.builders);
  const id = await resource.id;
  if (id !== undefined) parts.runsHere(id, resource);
  reuse?.own.setBuildId(id);
  if (placement !== undefined)
    placement.onMove = (endpoint, builders) => void reporter.builder(endpoint, builders);
  try {
    const result = await job(reporter);
    placement?.finish('success');
    return result;
  } catch (err) {
    placement?.finish(failureStatus(err));
    throw err;
  }
}
