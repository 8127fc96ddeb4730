/**
 * Following and waiting (build-flow.ts; docs/reuse.md): a request identical to one in flight
 * follows it (stages 1 and 2) when the branch still points at its commit; a job that found its key
 * in flight waits for that build (stage 11) and writes its own tag from it. Each returns to the
 * flow: an answer, or undefined / why the request must build after all.
 */
import { Cancellation } from '../../src/exec/cancellation.js';
import { reasonOf } from '../../src/errors/errors.js';
import type { BuildDeps } from '../job/build-deps.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { formatElapsed, logReused, type FollowingJob } from '../reuse/decision.js';
import type { InFlightBuild, OwnedBuild, Waiter } from '../reuse/in-flight.js';
import { registryAccess } from '../reuse/reuse-deps.js';
import { pushedDigest, reuseByKey } from '../reuse/reuse-image.js';
import { TaggedImageTarget } from '../../src/rules/image-target.js';

/** What following uses of the flow: its deps, the branch's tip, and where a follower is told. */
export interface FollowParts {
  readonly deps: BuildDeps;
  /** The commits the request's branch points at now (git ls-remote). */
  readonly remoteTip: (plan: BuildPlan, signal: AbortSignal) => Promise<string[]>;
  /** The request follows the identical build in flight with this record id. */
  readonly followed: (buildId: Promise<string | undefined>) => void;
}

/** Calls `leave` when `signal` aborts; returns the detach function. */
export function onAbort(signal: AbortSignal, leave: () => void): () => void {
  if (signal.aborted) {
    leave();
    return () => undefined;
  }
  signal.addEventListener('abort', leave, { once: true });
  return () => signal.removeEventListener('abort', leave);
}

/**
 * Stage 1's look at the identical request in flight: when its commit is still the branch's tip,
 * the request becomes one of its waiters (counted, its record id told) and gets the wait (stage 2) to run;
 * undefined when it must build itself.
 */
export async function identicalToFollow(
  plan: BuildPlan,
  parts: FollowParts,
  existing: InFlightBuild<BuildResult>,
  clientSignal: AbortSignal,
): Promise<(() => Promise<BuildResult>) | undefined> {
  // The branch's tip is asked for at once, while the build in flight may still be cloning: a
  // follower then answers with that build, not a `git ls-remote` after it.
  const [commit, tips] = await Promise.all([
    existing.commit,
    parts.remoteTip(plan, clientSignal).catch(() => undefined),
  ]);
  if (commit === undefined) return undefined;
  if (tips === undefined) {
    parts.deps.logger.info({ repository: plan.repository }, 'branch tip not checked: not followed early');
    return undefined;
  }
  if (!tips.includes(commit)) return undefined;
  const waiter = existing.follow();
  if (waiter === undefined) return undefined;
  parts.deps.metrics.buildFollowsTotal.inc();
  parts.followed(existing.buildId);
  return () => followIdentical(existing, waiter, clientSignal);
}

/** Stage 2: the identical build's answer, waited for until the client goes away. */
async function followIdentical(
  existing: InFlightBuild<BuildResult>,
  waiter: Waiter,
  clientSignal: AbortSignal,
): Promise<BuildResult> {
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
export async function waitForSameKey(
  plan: BuildPlan,
  parts: FollowParts,
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
    parts.deps.metrics.buildFollowsTotal.inc();
    const outcome = await waiting;
    if (!outcome.ok) return building(outcome.why, outcome.lost === true);
    const other = outcome.built;
    const { soFar } = following;
    const target = new TaggedImageTarget(soFar.registry, soFar.name, soFar.tag);
    if (other.registry === soFar.registry && other.name === soFar.name && other.tag === soFar.tag) {
      following.log.write(
        `the build with the same key pushed ${other.image} itself: reused, nothing to write\n`,
      );
      parts.deps.metrics.buildReusesTotal.inc();
      const digest = other.digest ?? (await pushedDigest(target, registryAccess(plan, parts.deps)));
      return { ...soFar, imageBuildLogId: following.log.id, digest };
    }
    const reused = await reuseByKey(
      following.keyed.key,
      target,
      following.source,
      registryAccess(plan, parts.deps),
    );
    if (reused.kind === 'absent') return building('the build followed recorded no key');
    logReused(
      following.log,
      reused,
      following.keyed.key,
      `${formatElapsed(started)} after that build`,
      soFar.image,
    );
    parts.deps.metrics.buildReusesTotal.inc();
    return { ...soFar, imageBuildLogId: following.log.id, digest: reused.digest };
  } catch (err) {
    return building(`reusing the image of the build with the same key failed (${reasonOf(err)})`);
  } finally {
    await following.log.close();
  }
}
