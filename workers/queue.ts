/**
 * The build queue (the user's design): an in-process bounded p-queue whose concurrency is
 * `maxConcurrent` (0 = unlimited). Admission is immediate or refused: when `maxConcurrent`
 * jobs already run, `run` throws `busy` (429, Retry-After 30) synchronously and nothing
 * waits. A slot is released when the job settles, whatever the outcome. Each job gets its
 * own AbortSignal, aborted when the process must stop now (ctx.shutdownSignal).
 */
import PQueue from 'p-queue';
import { busy } from '../src/errors.js';
import type { Metrics } from '../src/observability/metrics.js';

export const BUSY_RETRY_AFTER_SECONDS = 30;

export interface BuildQueueOptions {
  /** 0 means no limit. */
  maxConcurrent: number;
  shutdownSignal: AbortSignal;
  metrics?: Pick<Metrics, 'buildsInFlight' | 'buildsCapacity'>;
}

export interface BuildQueue {
  /**
   * Admits `job` now or throws `busy` synchronously (before returning a promise).
   * The returned promise settles with the job's outcome; the slot is free again by then.
   */
  run<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Jobs admitted and not yet settled. */
  readonly inFlight: number;
  /** 0 means no limit. */
  readonly capacity: number;
}

export function createBuildQueue(options: BuildQueueOptions): BuildQueue {
  const capacity = Math.max(0, Math.floor(options.maxConcurrent));
  const queue = new PQueue({ concurrency: capacity === 0 ? Number.POSITIVE_INFINITY : capacity });
  let inFlight = 0;
  options.metrics?.buildsCapacity.set(capacity);
  options.metrics?.buildsInFlight.set(0);
  // One listener for all jobs (not one per job, which would pile up on the shared signal).
  const running = new Set<AbortController>();
  options.shutdownSignal.addEventListener(
    'abort',
    () => {
      for (const controller of running) controller.abort(options.shutdownSignal.reason);
    },
    { once: true },
  );

  const release = () => {
    inFlight -= 1;
    options.metrics?.buildsInFlight.set(inFlight);
  };

  return {
    get inFlight() {
      return inFlight;
    },
    capacity,
    run<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T> {
      // The admission decision and the increment happen in the same synchronous step,
      // so a burst can never admit more than `capacity` jobs.
      if (capacity > 0 && inFlight >= capacity) throw busy(capacity, BUSY_RETRY_AFTER_SECONDS);
      inFlight += 1;
      options.metrics?.buildsInFlight.set(inFlight);

      const controller = new AbortController();
      if (options.shutdownSignal.aborted) controller.abort(options.shutdownSignal.reason);
      running.add(controller);
      const settle = () => {
        running.delete(controller);
        release();
      };

      let started: Promise<T>;
      try {
        started = queue.add(() => job(controller.signal));
      } catch (err) {
        settle();
        throw err;
      }
      // p-queue has settled its own bookkeeping before this continuation runs.
      return started.finally(settle);
    },
  };
}
