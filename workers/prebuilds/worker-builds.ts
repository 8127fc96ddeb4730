/**
 * The prebuilds' builds through the build worker: a prebuild is an async build (`start`, its
 * trigger named) that runs on apart from any connection, and a newer head cancels it (`cancel`).
 * Its end reaches the prebuilds through the worker's build-ended listeners.
 */
import { randomUUID } from 'node:crypto';
import { ERROR_CLASSES } from '../../src/errors/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import type { PrebuildTrigger } from '../../src/prebuilds/types.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { PrebuildBuilds } from './ports.js';

/** What the prebuilds use of the build worker (workers/build-worker.ts). */
interface Worker {
  start(
    plan: BuildPlan,
    options: { readonly requestId: string; readonly logger: Logger; readonly trigger: PrebuildTrigger },
  ): Promise<{ readonly id: string }>;
  cancel(id: string, by: string): Promise<unknown>;
  record(id: string): Promise<{ readonly phase: string } | undefined>;
}

export class WorkerPrebuildBuilds implements PrebuildBuilds {
  readonly #worker: Worker;
  readonly #logger: Logger;

  constructor(worker: Worker, logger: Logger) {
    this.#worker = worker;
    this.#logger = logger;
  }

  async start(
    plan: BuildPlan,
    options: { trigger: PrebuildTrigger; logger: Logger },
  ): Promise<{ id: string }> {
    const requestId = `prebuild-${randomUUID()}`;
    const logger = options.logger.child({ requestId });
    const record = await this.#worker.start(plan, { requestId, logger, trigger: options.trigger });
    return { id: record.id };
  }

  async ended(id: string): Promise<boolean> {
    const record = await this.#worker.record(id);
    return record === undefined || record.phase === 'finished';
  }

  /** Cancels a queued or running prebuild; one that has finished, or is no longer kept, is left alone. */
  async cancel(id: string, reason: string): Promise<void> {
    try {
      await this.#worker.cancel(id, `the prebuilds (${reason})`);
      this.#logger.info({ buildId: id, reason }, 'prebuild cancelled');
    } catch (err) {
      if (err instanceof ERROR_CLASSES.BUILD_FINISHED || err instanceof ERROR_CLASSES.BUILD_NOT_FOUND) return;
      throw err;
    }
  }
}
