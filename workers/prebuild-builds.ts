/**
 * The prebuilds' builds through the build worker's submit: a prebuild starts as a submission of
 * its own (its trigger named, its id told once recorded) that runs on after the start answers,
 * and is cancelled by aborting that submission. Each finished prebuild's record goes to `ended`.
 */
import { randomUUID } from 'node:crypto';
import type { BuildRegistry } from '../src/builds/types.js';
import { Cancellation } from '../src/exec/cancellation.js';
import type { Logger } from '../src/observability/logger.js';
import type { PrebuildTrigger } from '../src/prebuilds/types.js';
import type { BuildWorker } from './build-worker.js';
import type { BuildPlan } from './plan/plan-types.js';
import type { PrebuildBuilds, PrebuildEnded } from './prebuilds/ports.js';

export class WorkerPrebuildBuilds implements PrebuildBuilds {
  readonly #worker: Pick<BuildWorker, 'submit'>;
  readonly #builds: Pick<BuildRegistry, 'list'>;
  readonly #running = new Map<string, AbortController>();
  readonly #logger: Logger;
  /** Set once the prebuilds exist (they are made with this adapter). */
  ended: PrebuildEnded = async () => undefined;

  constructor(worker: Pick<BuildWorker, 'submit'>, builds: Pick<BuildRegistry, 'list'>, logger: Logger) {
    this.#worker = worker;
    this.#logger = logger;
    this.#builds = builds;
  }

  start(plan: BuildPlan, options: { trigger: PrebuildTrigger; logger: Logger }): Promise<{ id: string }> {
    const requestId = `prebuild-${randomUUID()}`;
    const controller = new AbortController();
    const logger = options.logger.child({ requestId });
    return new Promise((resolve, reject) => {
      let id: string | undefined;
      const onRecorded = (recorded: string): void => {
        id = recorded;
        this.#running.set(recorded, controller);
        resolve({ id: recorded });
      };
      const submission = {
        requestId,
        logger,
        signal: controller.signal,
        trigger: options.trigger,
        onRecorded,
      };
      void this.#worker
        .submit(plan, submission)
        .catch((err: unknown) => {
          if (id === undefined) reject(err);
        })
        .then(() => this.#finished(id, requestId, logger));
    });
  }

  async #finished(id: string | undefined, requestId: string, logger: Logger): Promise<void> {
    if (id === undefined) return;
    this.#running.delete(id);
    try {
      const [record] = await this.#builds.list({ requestId });
      if (record !== undefined) await this.ended(record);
    } catch (err) {
      logger.warn({ err, buildId: id }, 'prebuild end not handled');
    }
  }

  cancel(id: string, reason: string): Promise<void> {
    const running = this.#running.get(id);
    if (running !== undefined) {
      this.#logger.info({ buildId: id, reason }, 'prebuild cancelled');
      running.abort(new Cancellation('superseded'));
    }
    return Promise.resolve();
  }
}
