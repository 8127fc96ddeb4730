/**
 * The life of one build, from its plan to its answer, its stages in order (ARCHITECTURE.md): 1 admit,
 * (an answered commit, memo-stages.ts) 2 clone, 3 key from the trees, 4 decide, 5 check out, 6 key
 * from the checkout, 7 decide, 8 build and push, 9 record, 10 answer. Entered once per request: each
 * stage is a call that returns here (job-stages.ts, follow.ts, placement.ts, answer.ts).
 */
import { randomUUID } from 'node:crypto';
import type { BuildReporter } from '../src/builds/types.js';
import { serviceError } from '../src/errors/errors.js';
import { Cancellation } from '../src/exec/cancellation.js';
import { answerBuild, failureStatus, stopwatch, type Settled } from './answer.js';
import { withSecretsIdentity } from './builder/secret-identity.js';
import type { BuildDeps } from './build-deps.js';
import type { BuildResource } from './build-resource.js';
import { startPendingCli, type PendingCli } from './builder/pending-cli.js';
import { createRequestDir, removeRequestDir } from './common/request-dir.js';
import { followBuild, followIdentical, onAbort, type FollowParts } from './follow.js';
import { JobEnding, type Cloned, type JobReuse } from './job.js';
import { reportingLogStore, reportKey, stageClock } from './job-details.js';
import {
  answered,
  buildAndPush,
  checkOut,
  clone,
  decide,
  decideFromCheckout,
  keyFromTrees,
  record,
} from './job-stages.js';
import { fromMemo, remembered } from './memo-stages.js';
import { placeAndRecord, type FlowParts } from './placement.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { isFollowingJob, type JobOutcome } from './reuse/decision.js';
import type { OwnedBuild } from './reuse/in-flight.js';
import { requestIdentity } from './reuse/request-identity.js';
import type { Submission } from './worker-types.js';

export type { FlowParts } from './placement.js';

/** One request's build: its plan as submitted, the request, its record, and the worker's parts. */
export interface Flow {
  readonly plan: BuildPlan;
  readonly submission: Submission;
  readonly resource: BuildResource;
  readonly parts: FlowParts;
}

/** What the stages of one flow share once admitted. */
interface Admitted extends Flow {
  /** Aborted when the build's last waiter has gone, or it is cancelled. */
  readonly signal: AbortSignal;
}

/** A build from its plan to its answer: stage 1, the job (stages 2 to 9) in its slot, stage 10. */
export async function runBuild(flow: Flow): Promise<BuildResult> {
  const elapsedSeconds = stopwatch();
  const signal = AbortSignal.any([flow.submission.signal, flow.resource.signal]);
  let settled: Settled;
  let plan = flow.plan;
  try {
    // 1. admit: the secrets' identity (the build key and the follow identity hold it), a builder
    // for each platform (or 400/503), then a slot (or 429), or follow the identical request.
    plan = await withSecretsIdentity(plan, flow.parts.deps.secretIdentityKey);
    flow.parts.fleet.refuse(plan.platforms);
    settled = { ok: true, result: await admit({ ...flow, plan, signal }) };
  } catch (err) {
    settled = { ok: false, err };
  }
  // 10. answer: counted, logged once, and kept in the build's record (answer.ts).
  return answerBuild({ ...flow, plan, signal, elapsedSeconds }, settled);
}

/** Stage 1 with reuse off: one job in a slot. With reuse on: follow, or own the request's job. */
async function admit(flow: Admitted): Promise<BuildResult> {
  const { deps } = flow.parts;
  if (!deps.config.build.reuse) return resultOf(await inSlot(flow, flow.signal));
  const id = `req:${requestIdentity(flow.plan)}`;
  // Looked up and, when absent, registered in the same synchronous step: a burst has one owner.
  const existing = deps.reuse.inFlight.find(id);
  const followedEarly =
    existing === undefined
      ? undefined
      : await followIdentical(flow.plan, followParts(flow), existing, flow.signal);
  return followedEarly ?? ownBuild(flow, id);
}

/**
 * Builds a request waits for in turn. The second: when the build it waited for left no outcome
 * (its replica died), every request that waited for it builds, and the first of them to hold the
 * key's lease owns it while the others follow that one, instead of all building. After a build that
 * failed, each waiter builds at once (a failure is not handed from waiter to waiter).
 */
const MAX_FOLLOWS = 2;

/**
 * The request's own job; when it finds its key in flight, the follow wait (follow.ts), then a
 * rebuild when that build gave nothing. A build is cancelled only when its last waiter has gone.
 */
async function ownBuild(flow: Admitted, id: string): Promise<BuildResult> {
  const { inFlight } = flow.parts.deps.reuse;
  const own = inFlight.start(id) ?? inFlight.start(`${id}#${randomUUID()}`);
  if (own === undefined) throw serviceError('INTERNAL', {}, { cause: 'no in-flight entry could be started' });
  const left = onAbort(flow.signal, () => own.waiter.leave(new Cancellation('client_gone')));
  const cancelSignal = flow.resource.signal;
  const cancelled = onAbort(cancelSignal, () => own.cancel(cancelSignal.reason));
  try {
    let outcome = await inSlot(flow, own.signal, { own, followAllowed: true });
    for (let follows = 1; isFollowingJob(outcome); follows += 1) {
      const answer = await followBuild(flow.plan, followParts(flow), outcome, own);
      if (!('rebuild' in answer)) {
        outcome = answer;
        break;
      }
      const followAllowed = answer.lost && follows < MAX_FOLLOWS;
      outcome = await inSlot(flow, own.signal, { own, followAllowed, note: answer.rebuild });
    }
    return settledOwn(own, { ok: true, result: resultOf(outcome) });
  } catch (err) {
    return settledOwn(own, { ok: false, err });
  } finally {
    left();
    cancelled();
  }
}

/** The in-flight entry settled as the request's own build ended. */
function settledOwn(own: OwnedBuild<BuildResult>, settled: Settled): BuildResult {
  own.settle(settled.ok ? { ok: true, value: settled.result } : { ok: false, error: settled.err });
  if (!settled.ok) throw settled.err;
  return settled.result;
}

/** A job outcome that must be a result (reuse off: the job never follows). */
function resultOf(outcome: JobOutcome): BuildResult {
  if (isFollowingJob(outcome))
    throw serviceError('INTERNAL', {}, { cause: 'a job without reuse cannot follow another build' });
  return outcome;
}

/** What following uses of this flow. */
function followParts(flow: Admitted): FollowParts {
  const deps: BuildDeps = { ...flow.parts.deps, logger: flow.submission.logger };
  return {
    deps,
    remoteTip: (plan, signal) => flow.parts.remoteTip(plan, deps, signal),
    followed: (buildId) => void buildId.then((id) => flow.resource.follow(id)),
  };
}

/**
 * A job in a slot of the queue (its reserved one first): placed on a builder synchronously (or
 * busy) and recorded (placement.ts), then stages 2 to 9; the builder is told how it ended.
 */
function inSlot(flow: Admitted, signal: AbortSignal, reuse?: JobReuse): Promise<JobOutcome> {
  const { config } = flow.parts.deps;
  return flow.parts.queue.run(
    async (slotSignal) => {
      const placed = await placeAndRecord(flow, reuse);
      try {
        const outcome = await flow.parts.runJob(flow.plan, placed.deps, slotSignal, placed.reporter, reuse);
        placed.finish('success');
        return outcome;
      } catch (err) {
        placed.finish(failureStatus(err));
        throw err;
      }
    },
    {
      signal,
      deadlineSeconds: config.build.cloneTimeoutSeconds + config.build.timeoutSeconds,
      ...(flow.submission.reservation === undefined ? {} : { reservation: flow.submission.reservation }),
    },
  );
}

/** Stages 2 to 9 of a build admitted with a slot: its outcome (a result, or following another build). */
export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
): Promise<BuildResult>;
export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse: JobReuse | undefined,
): Promise<JobOutcome>;
export async function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
): Promise<JobOutcome> {
  const deps: BuildDeps = { ...buildDeps, logStore: reportingLogStore(buildDeps.logStore, reporter) };
  const dir = await createRequestDir(deps.config.scratchDir);
  // The CLI loads while git runs; discarded unless the job builds. A job that may be answered from
  // the trees (reuse on) starts it only once it knows it will check out: an unchanged push, the
  // common case then, does not pay its start-up.
  let pending: PendingCli | undefined;
  const cli = (): PendingCli => (pending ??= startPendingCli(deps, { signal, secrets: plan.secrets }));
  const keying = reuse !== undefined && !plan.noCache;
  if (!keying) cli();
  const clock = stageClock(reporter, deps.logger);
  try {
    const memo = keying ? await fromMemo(plan, deps, signal, reporter, reuse, clock) : undefined;
    if (memo !== undefined && typeof memo !== 'string') return memo;
    const job = await clone({
      plan,
      deps,
      dir,
      signal,
      reporter,
      reuse,
      keying,
      cli,
      clock,
      ...(memo === undefined ? {} : { memoNote: memo }),
    });
    try {
      return await afterClone(job);
    } finally {
      await job.open.end();
    }
  } finally {
    await pending?.discard();
    await removeRequestDir(dir);
  }
}

/** Stages 3 to 9, in order; the img log and the key's lease are settled by JobEnding. */
async function afterClone(job: Cloned): Promise<JobOutcome> {
  const ending = new JobEnding(job);
  try {
    const { clock } = job;
    const started = performance.now();
    const fromTrees = await keyFromTrees(job, ending);
    clock.lap('key from the trees');
    const early = fromTrees === undefined ? undefined : await decide(job, ending, fromTrees, started);
    if (early !== undefined) clock.lap(early.kind === 'reuse' ? 'decide and write the tag' : 'decide');
    if (early !== undefined && early.kind !== 'build') {
      // The record names the key it reused (its usage's saving is looked up by it, docs/usage.md).
      await reportKey(job, early);
      await job.open.end('build inputs known from the trees and unchanged: nothing checked out');
      clock.lap('clone end');
      return ending.ended(await remembered(job, early, answered(job, early, await ending.log())));
    }
    const checkedOut = await checkOut(job);
    clock.lap('check out');
    const imgLog = await ending.log();
    const decision = early ?? (await decideFromCheckout(job, ending, checkedOut, imgLog));
    if (early === undefined && decision !== undefined) clock.lap('key from the checkout and decide');
    if (decision?.keyed !== undefined) await reportKey(job, decision);
    if (decision !== undefined && decision.kind !== 'build')
      return ending.ended(await remembered(job, decision, answered(job, decision, imgLog)));
    // Only work that runs BuildKit counts against a tenant's budget: a reuse is answered above.
    await job.deps.buildAllowed?.(job.plan.repository);
    const pushed = await buildAndPush(job, checkedOut, imgLog, decision?.keyed?.key ?? '');
    clock.lap('build and push');
    const result = await record(job, decision?.keyed, pushed, imgLog);
    clock.lap('record');
    return ending.ended(await remembered(job, decision, result));
  } finally {
    await ending.close();
  }
}
