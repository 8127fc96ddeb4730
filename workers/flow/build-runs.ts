/**
 * The builds this instance runs: each request's flow (build-flow.ts, which answers it and ends
 * its record), the resources DELETE finds here, the build-ended listeners, and the runs in
 * progress that the drain on SIGTERM waits for.
 */
import type { BuildEndedListener, BuildRecord } from '../../src/builds/types.js';
import type { Logger } from '../../src/observability/logger.js';
import { answerUnstarted } from './answer.js';
import { runFlow, type FlowParts } from './build-flow.js';
import { BuildResource } from './build-resource.js';
import { remoteTip } from '../git/ls-remote.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import type { BuildWorkerContext, Submission } from './worker-types.js';

/** What a flow was asked: its plan and how. */
export interface RunAsked {
  readonly plan: BuildPlan;
  readonly submission: Submission;
}

export class BuildRuns {
  readonly #ctx: BuildWorkerContext;
  readonly #parts: FlowParts;
  /**
   * The builds this instance runs (DELETE /builds/{id} finds them here by their record's id), each
   * with what it was asked (to hand it back to the queue).
   */
  readonly #local = new Map<BuildResource, RunAsked>();
  readonly #listeners: BuildEndedListener[] = [];
  /** Every request's flow in progress, sync or async. */
  readonly #runs = new Set<Promise<unknown>>();

  constructor(ctx: BuildWorkerContext, parts: Pick<FlowParts, 'deps' | 'queue' | 'fleet' | 'runJob'>) {
    this.#ctx = ctx;
    this.#parts = { ...parts, builds: ctx.builds, remoteTip };
  }

  /** A build's resource; `tenant`: the one its quotas and turns are counted for (kept in its record). */
  resource(logger: Logger, tenant?: string): BuildResource {
    return new BuildResource(this.#ctx.builds, logger, this.#listeners, tenant);
  }

  /** The build `id` when it runs here. O(builds running here). */
  local(id: string): BuildResource | undefined {
    for (const resource of this.#local.keys()) if (resource.recordId === id) return resource;
    return undefined;
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
    this.#local.set(resource, { plan, submission });
    const result = runFlow({ plan, submission, resource, parts: this.#parts }).finally(() =>
      this.#local.delete(resource),
    );
    const settled = result.catch(() => undefined);
    this.#runs.add(settled);
    void settled.then(() => this.#runs.delete(settled));
    return result;
  }

  /**
   * Hands every build running here whose request any replica can plan again (it carried no
   * credentials of its own) back to the shared queue (`requeue`), and no longer ends it here: the
   * process stops before it could finish them. Answers how many; the others run on until killed.
   * O(builds running here), one requeue each.
   */
  async handBack(requeue: (id: string, asked: RunAsked) => Promise<void>): Promise<number> {
    const { builds, logger } = this.#ctx;
    if (builds.handBack === undefined) return 0;
    const handOver = builds.handBack.bind(builds);
    const handed = await Promise.all(
      [...this.#local].map(async ([resource, asked]) => {
        if (asked.plan.request === undefined) return false;
        try {
          return await resource.handBack((id) => handOver(id, () => requeue(id, asked)));
        } catch (err) {
          logger.warn({ err }, 'could not hand a build back to the queue');
          return false;
        }
      }),
    );
    return handed.filter(Boolean).length;
  }

  /**
   * The build `id` runs on another replica now (its lease was taken there): this instance neither
   * reports nor ends it any more, and stops it. O(builds running here).
   */
  async letGo(id: string): Promise<void> {
    const resource = this.local(id);
    if (resource === undefined) return;
    if (!(await resource.handBack(async () => true))) return;
    this.#ctx.logger.warn({ buildId: id }, 'build stopped here: another replica runs it again');
    resource.cancel('the replica that runs it again');
  }

  /** Ends the record of a queued build that never started, answered with `err`. */
  async endUnstarted(id: string, err: unknown): Promise<void> {
    const record = await this.#ctx.builds.get(id);
    const resource = this.resource(this.#ctx.logger);
    resource.bind(id);
    await answerUnstarted(this.#ctx.metrics, resource, err, record?.elapsedSeconds ?? 0);
  }
}
