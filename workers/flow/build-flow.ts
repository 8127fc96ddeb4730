/**
 * The life of one build, from its admission to its answer, each stage a row of STAGES
 * (workers/stages/table.ts) started by `stage`, which logs its lap, lists it in the record and sets
 * the record's phase: 1 admit (admission.ts), 2 follow an identical build (follow.ts), the job in
 * its slot (stages 3 to 10 and 12 to 14, job-flow.ts), 11 wait for the same key (follow.ts),
 * 15 answer (answer.ts). Entered once per request; every stage returns here, none calls in.
 */
import { randomUUID } from 'node:crypto';
import { serviceError } from '../../src/errors/errors.js';
import { Cancellation } from '../../src/exec/cancellation.js';
import { identified, placeAndRecord, type Flow, type PlacedJob, type Started } from './admission.js';
import { answerBuild, countAnswer, failureStatus, stopwatch, type Settled } from './answer.js';
import { identicalToFollow, onAbort, waitForSameKey } from './follow.js';
import type { JobReuse } from '../job/job.js';
import { runJob } from '../job/job-flow.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { isWaitingJob, type JobOutcome } from '../reuse/decision.js';
import type { OwnedBuild } from '../reuse/in-flight.js';
import { requestIdentity } from '../reuse/request-identity.js';
import { BuildLaps } from '../stages/laps.js';
import { stage } from '../stages/stage.js';
import { STAGES } from '../stages/table.js';

export type { Flow, FlowParts } from './admission.js';

/** A build from its admission to its answer: its result, or it throws the answer's error. */
export async function runFlow(flow: Flow): Promise<BuildResult> {
  const elapsedSeconds = stopwatch();
  const signal = AbortSignal.any([flow.submission.signal, flow.resource.signal]);
  const started: Started = { ...flow, signal, laps: new BuildLaps(flow.submission.logger) };
  let settled: Settled;
  let plan = flow.plan;
  try {
    const admitted = await stage(started, STAGES.admit, () => admit(started));
    plan = admitted.plan;
    settled = { ok: true, result: await afterAdmission({ ...started, plan }, admitted) };
  } catch (err) {
    settled = { ok: false, err };
  }
  const ending = { ...flow, plan, signal, elapsedSeconds };
  const answered = await stage(started, STAGES.answer, () => countAnswer(ending, settled));
  return answerBuild(ending, answered);
}

/** What stage 1 admits: following an identical build, or a job placed and recorded. */
type Admitted =
  | { readonly kind: 'follow'; readonly plan: BuildPlan; readonly follow: () => Promise<BuildResult> }
  | {
      readonly kind: 'job';
      readonly plan: BuildPlan;
      readonly placed: PlacedJob;
      readonly own?: OwnedBuild<BuildResult>;
    };

/**
 * Stage 1: the plan identified, then (reuse on) an identical request in flight followed when its
 * commit is still the branch's tip, else the request's own entry, a slot, a builder, a record.
 */
async function admit(flow: Started): Promise<Admitted> {
  const plan = await identified(flow);
  const { deps } = flow.parts;
  const reserved = flow.submission.reservation;
  if (!deps.config.build.reuse)
    return { kind: 'job', plan, placed: await placeAndRecord(flow, plan, reserved, undefined) };
  const id = `req:${requestIdentity(plan)}`;
  // Looked up and, when absent, registered in the same synchronous step: a burst has one owner.
  const existing = deps.reuse.inFlight.find(id);
  if (existing !== undefined) {
    const follow = await identicalToFollow(flow, plan, existing);
    if (follow !== undefined) return { kind: 'follow', plan, follow };
  }
  const { inFlight } = deps.reuse;
  const own = inFlight.start(id) ?? inFlight.start(`${id}#${randomUUID()}`);
  if (own === undefined) throw serviceError('INTERNAL', {}, { cause: 'no in-flight entry could be started' });
  try {
    const placed = await placeAndRecord(flow, plan, reserved, { own, followAllowed: true });
    return { kind: 'job', plan, placed, own };
  } catch (err) {
    own.settle({ ok: false, error: err });
    throw err;
  }
}

/** After stage 1: the followed build's answer, or the request's own job(s). */
function afterAdmission(flow: Started, admitted: Admitted): Promise<BuildResult> {
  if (admitted.kind === 'follow') return stage(flow, STAGES.followIdentical, admitted.follow);
  if (admitted.own === undefined) return inSlot(flow, admitted.placed, flow.signal).then(resultOf);
  return ownBuild(flow, admitted.placed, admitted.own);
}

/**
 * Builds a request waits for in turn. The second: when the build it waited for left no outcome
 * (its replica died), every request that waited for it builds, and the first of them to hold the
 * key's lease owns it while the others wait for that one, instead of all building. After a build
 * that failed, each waiter builds at once (a failure is not handed from waiter to waiter).
 */
const MAX_WAITS = 2;

/**
 * The request's own job; when it finds its key in flight, stage 11 waits for that build, then a
 * rebuild (admitted again) when it gave nothing. Cancelled only when its last waiter has gone.
 */
async function ownBuild(flow: Started, first: PlacedJob, own: OwnedBuild<BuildResult>): Promise<BuildResult> {
  const left = onAbort(flow.signal, () => own.waiter.leave(new Cancellation('client_gone')));
  const cancelSignal = flow.resource.signal;
  const cancelled = onAbort(cancelSignal, () => own.cancel(cancelSignal.reason));
  try {
    let outcome = await inSlot(flow, first, own.signal, { own, followAllowed: true });
    for (let waits = 1; isWaitingJob(outcome); waits += 1) {
      const following = outcome;
      const answer = await stage(flow, STAGES.waitForSameKey, () => waitForSameKey(flow, following, own));
      if (!('rebuild' in answer)) {
        outcome = answer;
        break;
      }
      const reuse = { own, followAllowed: answer.lost && waits < MAX_WAITS, note: answer.rebuild };
      const placed = await stage(flow, STAGES.admit, () => placeAndRecord(flow, flow.plan, undefined, reuse));
      outcome = await inSlot(flow, placed, own.signal, reuse);
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

/** A job outcome that must be a result (reuse off: the job never waits for another build). */
function resultOf(outcome: JobOutcome): BuildResult {
  if (isWaitingJob(outcome))
    throw serviceError('INTERNAL', {}, { cause: 'a job without reuse cannot wait for another build' });
  return outcome;
}

/** The job of `placed` in its slot (never busy: admitted), its deadline; the builder told how it ended. */
function inSlot(
  flow: Started,
  placed: PlacedJob,
  signal: AbortSignal,
  reuse?: JobReuse,
): Promise<JobOutcome> {
  const { config } = flow.parts.deps;
  const job = flow.parts.runJob ?? runJob;
  return flow.parts.queue.run(
    async (slotSignal) => {
      try {
        const outcome = await job(flow.plan, placed.deps, slotSignal, placed.reporter, reuse, flow.laps);
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
      reservation: placed.slot,
    },
  );
}
