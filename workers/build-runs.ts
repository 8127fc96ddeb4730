/**
 * The builds this instance runs: each request's flow (build-flow.ts, which answers it and ends
 * its record), the resources DELETE finds here, the build-ended listeners, and the runs in
 * progress that the drain on SIGTERM waits for.
 */
import type { BuildEndedListener, BuildRecord } from '../src/builds/types.js';
import type { Logger } from '../src/observability/logger.js';
import { answerUnstarted } from './answer.js';
import { runBuild, runBuildJob, type FlowParts } from './build-flow.js';
import { BuildResource } from './build-resource.js';
import { remoteTip } from './git/ls-remote.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import type { BuildJobRunner, BuildWorkerContext, Submission } from './worker-types.js';

export class BuildRuns {
  readonly #ctx: BuildWorkerContext;
  readonly #parts: FlowParts;
  /** The builds this instance runs, by record id (DELETE /builds/{id} finds them here). */
  readonly #local = new Map<string, BuildResource>();
  readonly #listeners: BuildEndedListener[] = [];
  /** Every request's flow in progress, sync or async. */
  readonly #runs = new Set<Promise<unknown>>();

  /** `parts.runJob` absent: the flow's own stages 2 to 9. */
  constructor(
    ctx: BuildWorkerContext,
    parts: Pick<FlowParts, 'deps' | 'queue' | 'fleet'> & { readonly runJob?: BuildJobRunner | undefined },
  ) {
    this.#ctx = ctx;
    this.#parts = {
      ...parts,
      runJob: parts.runJob ?? runBuildJob,
      builds: ctx.builds,
      remoteTip,
      runsHere: (id, resource) => this.runsHere(id, resource),
    };
  }

  /** A build's resource; `tenant`: the one its quotas and turns are counted for (kept in its record). */
  resource(logger: Logger, tenant?: string): BuildResource {
    return new BuildResource(this.#ctx.builds, logger, this.#listeners, tenant);
  }

  /** The build `id` when it runs here. */
  local(id: string): BuildResource | undefined {
    return this.#local.get(id);
  }

  /** The build `id` runs here: DELETE /builds/{id} finds it. */
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

  /** The flow of one request (build-flow.ts): its answer, its record ended with it. */
  run(plan: BuildPlan, submission: Submission, resource: BuildResource): Promise<BuildResult> {
    const result = runBuild({ plan, submission, resource, parts: this.#parts }).finally(() => {
      void resource.id.then(
        (id) => id !== undefined && this.#local.get(id) === resource && this.#local.delete(id),
      );
    });
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
    await answerUnstarted(this.#ctx.metrics, resource, err, record?.elapsedSeconds ?? 0);
  }
}
