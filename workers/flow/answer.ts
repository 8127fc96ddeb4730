/**
 * The last stage of a build (build-flow.ts): its result, or the error it ended with, counted once in
 * service_builds_total with its duration, told in one service-log line ("build succeeded", "build
 * failed"; a refusal is told where it is made, busy.ts) and kept in its record. The one place
 * builds are counted.
 */
import type { BuildAnswer } from '../../src/builds/types.js';
import {
  BuildersFullError,
  BusyError,
  serviceError,
  isServiceError,
  withLogId,
} from '../../src/errors/errors.js';
import { cancellationOf } from '../../src/exec/cancellation.js';
import type { Logger } from '../../src/observability/logger.js';
import type { BuildStatus, Metrics } from '../../src/observability/metrics.js';
import type { BuildResource } from './build-resource.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import type { Reservation } from '../queue/slots.js';

/** A build as it is answered: its flow, and the seconds since it was submitted. */
interface Ending {
  readonly plan: BuildPlan;
  readonly resource: BuildResource;
  /** Aborted when the build's last waiter has gone, or it was cancelled. */
  readonly signal: AbortSignal;
  readonly submission: { readonly logger: Logger; readonly reservation?: Reservation | undefined };
  readonly parts: { readonly deps: { readonly metrics: Metrics } };
  readonly elapsedSeconds: () => number;
}

export type Settled =
  { readonly ok: true; readonly result: BuildResult } | { readonly ok: false; readonly err: unknown };

/** The final status of an admitted build that threw. */
export function failureStatus(err: unknown): BuildStatus {
  return isServiceError(err) && err.status < 500 ? 'invalid_request' : 'failure';
}

/** A clock started now: seconds since. */
export function stopwatch(): () => number {
  const started = performance.now();
  return () => (performance.now() - started) / 1000;
}

/** How a build is answered, once counted: its result, or the error it answers with. */
export type Answered =
  { readonly ok: true; readonly result: BuildResult } | { readonly ok: false; readonly err: unknown };

/**
 * Stage 15, answer: the build counted and logged once (a refusal, made where it was decided, as
 * busy); a cancelled build answers with its cancellation. O(1).
 */
export async function countAnswer(ending: Ending, settled: Settled): Promise<Answered> {
  if (settled.ok) {
    counted(ending, settled);
    return settled;
  }
  const refused = settled.err instanceof BusyError || settled.err instanceof BuildersFullError;
  if (refused) ending.parts.deps.metrics.countBuild('busy');
  const thrown = refused ? settled.err : counted(ending, settled);
  const cancelled = ending.resource.cancelled;
  return { ok: false, err: cancelled?.by === undefined ? thrown : cancelledBy(cancelled.by, thrown) };
}

/** The answer kept in the build's record, which it finishes; its result, or it throws. */
export async function answerBuild(ending: Ending, answered: Answered): Promise<BuildResult> {
  const { resource } = ending;
  try {
    if (answered.ok) {
      await resource.end({
        status: 'success',
        durationSeconds: ending.elapsedSeconds(),
        image: answered.result.image,
        answer: answerOf(answered),
      });
      return answered.result;
    }
    await endFailed(resource, answered.err, ending.elapsedSeconds());
    throw answered.err;
  } finally {
    // A slot held for this build and never taken (refused before its job) frees.
    ending.submission.reservation?.release();
  }
}

/** Counts and logs how an admitted build ended: its error when it failed. */
function counted(ending: Ending, settled: Settled): unknown {
  const { plan, signal } = ending;
  const logger = ending.submission.logger;
  const metrics = ending.parts.deps.metrics;
  const seconds = ending.elapsedSeconds();
  if (settled.ok) {
    const { result } = settled;
    metrics.countBuild('success', seconds);
    logger.info(
      {
        repository: plan.repository,
        image: result.image,
        commit: result.commit,
        durationMs: Math.round(seconds * 1000),
      },
      'build succeeded',
    );
    return undefined;
  }
  const { err } = settled;
  const status = failureStatus(err);
  metrics.countBuild(status, seconds);
  const cancelled = cancellationOf(signal.reason);
  if (cancelled !== undefined) {
    logger.warn({ repository: plan.repository, durationMs: Math.round(seconds * 1000) }, cancelled.message);
  }
  logger.info(
    {
      repository: plan.repository,
      status,
      code: isServiceError(err) ? err.code : 'INTERNAL',
      ...(isServiceError(err) && err.details.logId !== undefined ? { logId: err.details.logId } : {}),
    },
    'build failed',
  );
  return err;
}

/**
 * A request refused before any build of it began (a 400 of its body or key, a 429 of the queue or
 * of a tenant's quota), counted as its status says.
 */
export function countRefusal(metrics: Pick<Metrics, 'countBuild'>, err: unknown): void {
  metrics.countBuild(isServiceError(err) && err.status === 429 ? 'busy' : failureStatus(err));
}

/** A request answered from a build it attached to (Idempotency-Key), counted as that answer. */
export function countAttached(
  metrics: Pick<Metrics, 'countBuild'>,
  answer: BuildAnswer,
  durationSeconds: number | undefined,
): void {
  metrics.countBuild(statusOfAnswer(answer), durationSeconds);
}

/** A queued build that ended before it started (cancelled, or no replica could run it). */
export async function answerUnstarted(
  metrics: Pick<Metrics, 'countBuild'>,
  resource: BuildResource,
  err: unknown,
  durationSeconds: number,
): Promise<void> {
  metrics.countBuild(failureStatus(err));
  await endFailed(resource, err, durationSeconds);
}

/** The record of a build that failed with `err`, ended with the answer its requests get. */
async function endFailed(resource: BuildResource, err: unknown, durationSeconds: number): Promise<void> {
  const answer = answerOf({ ok: false, err });
  await resource.end({
    status: failureStatus(err),
    durationSeconds,
    error: String(answer.body.error),
    answer,
  });
}

/** The status an answer is counted with in service_builds_total. */
function statusOfAnswer(answer: BuildAnswer): BuildStatus {
  if (answer.status < 300) return 'success';
  return answer.status < 500 ? 'invalid_request' : 'failure';
}

/** What a synchronous request is answered for `settled`: the result, or the error's status and body. */
function answerOf(settled: Settled): BuildAnswer {
  if (settled.ok) return { status: 200, body: { ...settled.result } };
  const error = isServiceError(settled.err)
    ? settled.err
    : serviceError('INTERNAL', {}, { cause: settled.err });
  return { status: error.status, body: error.toBody() };
}

/** The error of a build cancelled by `by` (DELETE /builds/{id}), keeping the log of `thrown`. */
export function cancelledBy(by: string, thrown: unknown): Error {
  const cancelled = serviceError('BUILD_CANCELLED', { by });
  const logId = isServiceError(thrown) ? thrown.details.logId : undefined;
  return logId === undefined ? cancelled : withLogId(cancelled, logId);
}
