/**
 * The last stage of a build (build-flow.ts): its result, or the error it ended with, counted once in
 * service_builds_total with its duration and told in one service-log line ("build succeeded",
 * "build failed", with the cancellation's reason when the build was cancelled).
 */
import type { BuildAnswer } from '../src/builds/types.js';
import { serviceError, isServiceError, withLogId } from '../src/errors/errors.js';
import { cancellationOf } from '../src/exec/cancellation.js';
import type { Logger } from '../src/observability/logger.js';
import type { BuildStatus, Metrics } from '../src/observability/metrics.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';

/** How a build is answered: its logger, the metrics, and a stopwatch started when it was submitted. */
export interface Answering {
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'countBuild'>;
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

/** Counts and logs how the build ended; the caller answers the result or throws the error. */
export function answerBuild(
  plan: BuildPlan,
  answering: Answering,
  settled: Settled,
  signal: AbortSignal,
): void {
  const { logger, metrics } = answering;
  const seconds = answering.elapsedSeconds();
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
    return;
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
}

/** The status an answer is counted with in service_builds_total. */
export function statusOfAnswer(answer: BuildAnswer): BuildStatus {
  if (answer.status < 300) return 'success';
  return answer.status < 500 ? 'invalid_request' : 'failure';
}

/** What a synchronous request is answered for `settled`: the result, or the error's status and body. */
export function answerOf(settled: Settled): BuildAnswer {
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
