/**
 * The builds this instance runs: each request's flow (build-flow.ts) with its record ended by the
 * answer before the result is handed on, the resources DELETE finds here, the build-ended
 * listeners, and the runs in progress that the drain on SIGTERM waits for.
 */
import type { BuildEndedListener, BuildRecord } from '../src/builds/types.js';
import { BusyError } from '../src/errors/errors.js';
import type { Logger } from '../src/observability/logger.js';
import { answerBuild, answerOf, cancelledBy, failureStatus, stopwatch, type Answering } from './answer.js';
import { runBuild } from './build-flow.js';
import { BuildResource } from './build-resource.js';
import { withSecretsIdentity } from './builder/secret-identity.js';
import { busyAnswer } from './busy.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { admissionOf, type PlacementParts } from './placement.js';
import type { BuildWorkerContext, Submission } from './worker-types.js';

export class BuildRuns {
  readonly #ctx: BuildWorkerContext;
  readonly #parts: PlacementParts;
  /** The builds this instance runs, by record id (DELETE /builds/{id} finds them here). */
  readonly #local = new Map<string, BuildResource>();
  readonly #listeners: BuildEndedListener[] = [];
  /** Every request's flow in progress, sync or async. */
  readonly #runs = new Set<Promise<unknown>>();

  constructor(ctx: BuildWorkerContext, parts: Omit<PlacementParts, 'runsHere'>) {
    this.#ctx = ctx;
    this.#parts = { ...parts, runsHere: (id, resource) => this.runsHere(id, resource) };
  }

  resource(logger: Logger): BuildResource {
    return new BuildResource(this.#ctx.builds, logger, this.#listeners);
  }

  /** The build `id` when it runs here. */
  local(id: string): BuildResource | undefined {
    return this.#local.get(id);
  }

  runsHere(id: string, resource: BuildResource): void {
    this.#local.set(id, resource);
  }

  /** Called with each build's finished record before any waiter gets its answer. */
  onEnded(listener: BuildEndedListener): void {
    this.#listeners.push(listener);
  }

  /** Runs every build-ended listener on `record` (a build finished as lost elsewhere). */
  async tellEnded(record: BuildRecord): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        await listener(record);
      } catch (err) {
        this.#ctx.logger.warn({ err, buildId: record.id }, 'a build-ended listener failed');
      }
    }
  }

  /** Resolves once no flow runs here. */
  async settled(): Promise<void> {
    while (this.#runs.size > 0) await Promise.all([...this.#runs]);
  }

  /** The flow of one request, its record ended with the answer before the result is handed on. */
  run(plan: BuildPlan, submission: Submission, resource: BuildResource): Promise<BuildResult> {
    const elapsedSeconds = stopwatch();
    const answering: Answering = { logger: submission.logger, metrics: this.#ctx.metrics, elapsedSeconds };
    const signal = AbortSignal.any([submission.signal, resource.signal]);
    // Keyed before admission: the build key and the follow identity hold the secrets' identity.
    const flow = this.#keyed(plan, answering, signal).then((keyed) =>
      runBuild({
        plan: keyed,
        admission: admissionOf(this.#parts, keyed, submission, resource),
        signal,
        refused: (err) =>
          busyAnswer(
            { ...this.#ctx, queue: this.#parts.queue },
            keyed,
            submission.logger,
            err instanceof BusyError,
          ),
        answering,
      }),
    );
    const result = this.#ended(flow, submission, resource, elapsedSeconds);
    const settled = result.catch(() => undefined);
    this.#runs.add(settled);
    void settled.then(() => this.#runs.delete(settled));
    return result;
  }

  /** Ends the record of a queued build that never started, answered with `err`. */
  async endUnstarted(id: string, err: unknown): Promise<void> {
    const record = await this.#ctx.builds.get(id);
    const resource = this.resource(this.#ctx.logger);
    resource.bind(id);
    const answer = answerOf({ ok: false, err });
    const status = failureStatus(err);
    this.#ctx.metrics.countBuild(status);
    await resource.end({
      status,
      durationSeconds: record?.elapsedSeconds ?? 0,
      error: String(answer.body.error),
      answer,
    });
  }

  /** The flow's result once the record is ended with its answer. */
  async #ended(
    flow: Promise<BuildResult>,
    submission: Submission,
    resource: BuildResource,
    elapsedSeconds: () => number,
  ): Promise<BuildResult> {
    try {
      const result = await flow;
      await resource.end({
        status: 'success',
        durationSeconds: elapsedSeconds(),
        image: result.image,
        answer: answerOf({ ok: true, result }),
      });
      return result;
    } catch (thrown) {
      const cancelled = resource.cancelled;
      const err = cancelled?.by === undefined ? thrown : cancelledBy(cancelled.by, thrown);
      const answer = answerOf({ ok: false, err });
      await resource.end({
        status: failureStatus(err),
        durationSeconds: elapsedSeconds(),
        error: String(answer.body.error),
        answer,
      });
      throw err;
    } finally {
      // A slot held for this build and never taken (refused before its job) frees.
      submission.reservation?.release();
      void resource.id.then(
        (id) => id !== undefined && this.#local.get(id) === resource && this.#local.delete(id),
      );
    }
  }

  /** `plan` with the identity of the secrets it offers (docs/secrets.md); a failure is the build's. */
  async #keyed(plan: BuildPlan, answering: Answering, signal: AbortSignal): Promise<BuildPlan> {
    try {
      return await withSecretsIdentity(plan, this.#parts.deps.secretIdentityKey ?? null);
    } catch (err) {
      answerBuild(plan, answering, { ok: false, err }, signal);
      throw err;
    }
  }
}
