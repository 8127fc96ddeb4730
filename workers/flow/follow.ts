/**
 * Following and waiting (build-flow.ts; docs/reuse.md): a request identical to one in flight
 * follows it (stages 1 and 2) when the branch still points at its commit; a job that found its key
 * in flight waits for that build (stage 11) and writes its own tag from it. Each returns to the
 * flow: an answer, or undefined / why the request must build after all.
 */
import { Cancellation } from '../../src/exec/cancellation.js';
import { reasonOf } from '../../src/errors/errors.js';
import type { BuildDeps } from '../job/build-deps.js';
import type { Started } from './admission.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { countReuse, formatElapsed, reuseByRecordedKey, type WaitingJob } from '../reuse/decision.js';
import type { InFlightBuild, OwnedBuild, Waiter } from '../reuse/in-flight.js';
import { registryAccess } from '../reuse/reuse-deps.js';
import { pushedDigest } from '../reuse/reuse-image.js';
import { TaggedImageTarget } from '../../src/rules/image-target.js';

/** The worker's deps, logging as the request. */
function requestDeps(flow: Started): BuildDeps {
  return { ...flow.parts.deps, logger: flow.submission.logger };
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
  flow: Started,
  plan: BuildPlan,
  existing: InFlightBuild<BuildResult>,
): Promise<(() => Promise<BuildResult>) | undefined> {
  const clientSignal = flow.signal;
  const deps = requestDeps(flow);
  // The branch's tip is asked for at once, while the build in flight may still be cloning: a
  // follower then answers with that build, not a `git ls-remote` after it.
  const [commit, tips] = await Promise.all([
    existing.commit,
    flow.parts.remoteTip(plan, deps, clientSignal).catch(() => undefined),
  ]);
  if (commit === undefined) return undefined;
  if (tips === undefined) {
    deps.logger.info({ repository: plan.repository }, 'branch tip not checked: not followed early');
    return undefined;
  }
  if (!tips.includes(commit)) return undefined;
  const waiter = existing.follow();
  if (waiter === undefined) return undefined;
  deps.metrics.buildFollowsTotal.inc();
  void existing.buildId.then((id) => flow.resource.follow(id));
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
  flow: Started,
  following: WaitingJob,
  own: OwnedBuild<BuildResult>,
): Promise<BuildResult | { rebuild: string; lost: boolean }> {
  const { plan } = flow;
  const deps = requestDeps(flow);
  const started = performance.now();
  const building = (why: string, lost = false) => {
    following.log.write(`# ${why}: building\n`);
    return { rebuild: `# waited in log ${following.log.id}: ${why}: building\n`, lost };
  };
  try {
    const waiting = following.followed.wait(own.signal);
    if (waiting === undefined) return building('the build with the same key was abandoned');
    deps.metrics.buildFollowsTotal.inc();
    const outcome = await waiting;
    if (!outcome.ok) return building(outcome.why, outcome.lost === true);
    const other = outcome.built;
    const { soFar } = following;
    const target = new TaggedImageTarget(soFar.registry, soFar.name, soFar.tag);
    if (other.registry === soFar.registry && other.name === soFar.name && other.tag === soFar.tag) {
      following.log.write(
        `the build with the same key pushed ${other.image} itself: reused, nothing to write\n`,
      );
      countReuse(deps);
      const digest = other.digest ?? (await pushedDigest(target, registryAccess(plan, deps)));
      return { ...soFar, imageBuildLogId: following.log.id, digest };
    }
    const reuse = { plan, deps, source: following.source, target, log: following.log };
    const digest = await reuseByRecordedKey(
      reuse,
      following.keyed.key,
      () => `${formatElapsed(started)} after that build`,
    );
    if (digest === undefined) return building('the build followed recorded no key');
    return { ...soFar, imageBuildLogId: following.log.id, digest };
  } catch (err) {
    return building(`reusing the image of the build with the same key failed (${reasonOf(err)})`);
  } finally {
    await following.log.close();
  }
}
