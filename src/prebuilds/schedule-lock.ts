/**
 * Who runs the schedules (the prebuild passes, retention): one replica at a time, and what one
 * scheduled pass is. Embedded mode: this instance, always. Redis mode (a src/redis/lock.ts lock):
 * a lock with a short lease that its holder renews; when the holder dies the lease runs out and
 * another replica takes it. The runner is src/schedules.ts.
 */
import type { Logger } from '../observability/logger.js';

export interface ScheduleLock {
  /** Takes the lock, or renews it when held; whether this instance holds it now. */
  hold(): Promise<boolean>;
  /** Lets it go (at shutdown), when held. */
  release(): Promise<void>;
}

export const alwaysHeld: ScheduleLock = {
  hold: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};

/** One periodic pass of the lock's holder. */
export interface ScheduledPass {
  /** Its name in the logs (`reconcile`, `refresh`, `retention`). */
  readonly name: string;
  /** Passes of one lane run one after the other, never two at once; lanes run side by side. */
  readonly lane: string;
  readonly intervalMs: number;
  /** Whether it runs as soon as this instance takes the lock, else one interval later. */
  readonly atOnce: boolean;
  run(logger: Logger): Promise<void>;
}
