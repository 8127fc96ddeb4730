/**
 * Stage 1 of a build, admission (docs/reuse.md, Following). Reuse off: one job in the queue.
 * Reuse on: a request identical to one in flight follows it before taking a slot when the branch
 * still points at its commit; otherwise it owns its own job. A job that finds its key in flight
 * frees its slot; its request waits for that build and answers as a reuse, or builds after all
 * when it gave nothing. A build is cancelled only when its last waiter has gone.
 */
import { randomUUID } from 'node:crypto';
import { Cancellation } from '../src/exec/cancellation.js';
import { reasonOf, serviceError } from '../src/errors/errors.js';
import type { BuildDeps } from './build-deps.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import type { BuildQueue } from './queue.js';
import {
  formatElapsed,
  isFollowingJob,
  logReused,
  type FollowingJob,
  type JobOutcome,
} from './reuse/decision.js';
import type { InFlightBuild, OwnedBuild } from './reuse/in-flight.js';
import { requestIdentity } from './reuse/request-identity.js';
import { registryAccess } from './reuse/reuse-deps.js';
import { pushedDigest, reuseByKey } from './reuse/reuse-image.js';
import { TaggedImageTarget } from '../src/rules/image-target.js';

/** Reuse for a job: its entry in the in-flight map, and whether it may follow another build. */
export interface JobReuse {
  readonly own: OwnedBuild<BuildResult>;
  readonly followAllowed: boolean;
  /** A line for the top of the img log (why this job builds after waiting for another build). */
  readonly note?: string;
}

export interface Admission {
  readonly queue: BuildQueue;
  /** This request's job (with the signal it must stop on, and its reuse when on). */
  readonly job: (signal: AbortSignal, reuse?: JobReuse) => Promise<JobOutcome>;
  readonly deps: BuildDeps;
  readonly deadlineSeconds: number;
  /** Throws when a platform of the plan has no builder that may take it (400, or 503 with Retry-After). */
  readonly refusePlatforms?: () => void;
  /** The commits the request's branch points at now (git ls-remote). */
  readonly remoteTip: (plan: BuildPlan, signal: AbortSignal) => Promise<string[]>;
  /** Aborted when the build is cancelled whatever its waiters (DELETE /builds/{id}). */
  readonly cancelSignal: AbortSignal;
  /** The request follows the identical build in flight with this record id. */
  readonly followed: (buildId: Promise<string | undefined>) => void;
}

/** A job outcome that must be a result (reuse off: the job never follows). */
function resultOf(outcome: JobOutcome): BuildResult {
  if (isFollowingJob(outcome))
    throw serviceError('INTERNAL', {}, { cause: 'a job without reuse cannot follow another build' });
  return outcome;
}

/** Calls `leave` when `signal` aborts; returns the detach function. */
function onAbort(signal: AbortSignal, leave: () => void): () => void {
  if (signal.aborted) {
    leave();
    return () => undefined;
  }
  signal.addEventListener('abort', leave, { once: true });
  return () => signal.removeEventListener('abort', leave);
}

/** Follows the identical request in flight, when its commit is still the branch's tip. */
async function followIdentical(
  plan: BuildPlan,
  admission: Admission,
  existing: InFlightBuild<BuildResult>,
  clientSignal: AbortSignal,
): Promise<BuildResult | undefined> {
  // The branch's tip is asked for at once, while the build in flight may still be cloning: a
  // follower then answers with that build, not a `git ls-remote` after it.
  const [commit, tips] = await Promise.all([
    existing.commit,
    admission.remoteTip(plan, clientSignal).catch(() => undefined),
  ]);
  if (commit === undefined) return undefined;
  if (tips === undefined) {
    admission.deps.logger.info({ repository: plan.repository }, 'branch tip not checked: not followed early');
    return undefined;
  }
  if (!tips.includes(commit)) return undefined;
  const waiter = existing.follow();
  if (waiter === undefined) return undefined;
  admission.deps.metrics.buildFollowsTotal.inc();
  admission.followed(existing.buildId);
  const detach = onAbort(clientSignal, () => waiter.leave(new Cancellation('client_gone')));
  try {
    return await existing.result;
  } finally {
    detach();
    waiter.leave();
  }
}

/**
 * Waits for the followed build (here or on another replica), then writes this request's tag from
 * the recorded key. When that build gave no image to reuse, the caller builds: `rebuild` is the
 * first line of that build's log (why it runs, and where the wait is logged); `lost`: that build
 * left no outcome (its replica died), so another of its waiters may be building it already.
 */
async function follow(
  plan: BuildPlan,
  admission: Admission,
  following: FollowingJob,
  own: OwnedBuild<BuildResult>,
): Promise<BuildResult | { rebuild: string; lost: boolean }> {
  const started = performance.now();
  const building = (why: string, lost = false) => {
    following.log.write(`# ${why}: building\n`);
    return { rebuild: `# waited in log ${following.log.id}: ${why}: building\n`, lost };
  };
  try {
    const waiting = following.followed.wait(own.signal);
    if (waiting === undefined) return building('the build with the same key was abandoned');
    admission.deps.metrics.buildFollowsTotal.inc();
    const outcome = await waiting;
    if (!outcome.ok) return building(outcome.why, outcome.lost === true);
    const other = outcome.built;
    const { soFar } = following;
    const target = new TaggedImageTarget(soFar.registry, soFar.name, soFar.tag);
    if (other.registry === soFar.registry && other.name === soFar.name && other.tag === soFar.tag) {
      following.log.write(
        `the build with the same key pushed ${other.image} itself: reused, nothing to write\n`,
      );
      admission.deps.metrics.buildReusesTotal.inc();
      const digest = other.digest ?? (await pushedDigest(target, registryAccess(plan, admission.deps)));
      return { ...soFar, imageBuildLogId: following.log.id, digest };
    }
    const reused = await reuseByKey(
      following.keyed.key,
      target,
      following.source,
      registryAccess(plan, admission.deps),
    );
    if (reused.kind === 'absent') return building('the build followed recorded no key');
    logReused(
      following.log,
      reused,
      following.keyed.key,
      `${formatElapsed(started)} after that build`,
      soFar.image,
    );
    admission.deps.metrics.buildReusesTotal.inc();
    return { ...soFar, imageBuildLogId: following.log.id, digest: reused.digest };
  } catch (err) {
    return building(`reusing the image of the build with the same key failed (${reasonOf(err)})`);
  } finally {
    await following.log.close();
  }
}

/**
 * Builds a request waits for in turn. The second: when the build it waited for left no outcome
 * (its replica died), every request that waited for it builds, and the first of them to hold the
 * key's lease owns it while the others follow that one, instead of all building. After a build that
 * failed, each waiter builds at once (a failure is not handed from waiter to waiter).
 */
const MAX_FOLLOWS = 2;

async function ownBuild(
  plan: BuildPlan,
  admission: Admission,
  id: string,
  clientSignal: AbortSignal,
): Promise<BuildResult> {
  const { inFlight } = admission.deps.reuse;
  const own = inFlight.start(id) ?? inFlight.start(`${id}#${randomUUID()}`);
  if (own === undefined) throw serviceError('INTERNAL', {}, { cause: 'no in-flight entry could be started' });
  const left = onAbort(clientSignal, () => own.waiter.leave(new Cancellation('client_gone')));
  const cancelled = onAbort(admission.cancelSignal, () => own.cancel(admission.cancelSignal.reason));
  const detach = (): void => {
    left();
    cancelled();
  };
  const job = (reuse: Omit<JobReuse, 'own'>) =>
    admission.queue.run((signal) => admission.job(signal, { own, ...reuse }), {
      signal: own.signal,
      deadlineSeconds: admission.deadlineSeconds,
    });
  try {
    let outcome = await job({ followAllowed: true });
    for (let follows = 1; isFollowingJob(outcome); follows += 1) {
      const answer = await follow(plan, admission, outcome, own);
      if (!('rebuild' in answer)) {
        outcome = answer;
        break;
      }
      outcome = await job({ followAllowed: answer.lost && follows < MAX_FOLLOWS, note: answer.rebuild });
    }
    const result = resultOf(outcome);
    own.settle({ ok: true, value: result });
    return result;
  } catch (err) {
    own.settle({ ok: false, error: err });
    throw err;
  } finally {
    detach();
  }
}

export async function admit(
  plan: BuildPlan,
  admission: Admission,
  clientSignal: AbortSignal,
): Promise<BuildResult> {
  if (!admission.deps.config.build.reuse) {
    return resultOf(
      await admission.queue.run((signal) => admission.job(signal), {
        signal: AbortSignal.any([clientSignal, admission.cancelSignal]),
        deadlineSeconds: admission.deadlineSeconds,
      }),
    );
  }
  const id = `req:${requestIdentity(plan)}`;
  // Looked up and, when absent, registered in the same synchronous step: a burst has one owner.
  const existing = admission.deps.reuse.inFlight.find(id);
  if (existing === undefined) return ownBuild(plan, admission, id, clientSignal);
  return (
    (await followIdentical(plan, admission, existing, clientSignal)) ??
    ownBuild(plan, admission, id, clientSignal)
  );
}
