/**
 * The slots of this instance: a bounded in-process p-queue, concurrency `maxConcurrent` (0 =
 * unlimited): `run` throws `busy` (429) at once when every slot runs or is reserved; nothing waits
 * here (builds that wait do so in the shared queue, docs/queue.md, which reserves a slot first).
 * Each job gets one AbortSignal: its deadline, its caller's signal or the process stopping now. Its
 * slot is free once the job has settled (processes ended, directory removed), never before.
 */
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import { RETRY_AFTER } from '../common/retry-after.js';
import { serviceError } from '../../src/errors/errors.js';
import { Cancellation } from '../../src/exec/cancellation.js';
import type { Metrics } from '../../src/observability/metrics.js';

/** The queue's own Retry-After; the build worker answers an estimate from data (common/retry-after.ts). */
const BUSY_RETRY_AFTER_SECONDS = RETRY_AFTER.default;

export interface BuildQueueOptions {
  /** 0 means no limit. */
  maxConcurrent: number;
  shutdownSignal: AbortSignal;
  metrics?: Pick<Metrics, 'buildsInFlight' | 'buildsCapacity'>;
}

interface JobOptions {
  /** Cancels this job when aborted (its reason should be a Cancellation). */
  signal?: AbortSignal;
  /** The job's one deadline; none when undefined or 0. */
  deadlineSeconds?: number;
  /** A slot reserved before: the job takes it (never busy); released if unused. */
  reservation?: Reservation;
}

/** A slot held for a build about to run (taken from the shared queue, or started at once). */
export interface Reservation {
  /** Frees the slot if no job took it (idempotent). */
  release(): void;
}

export interface BuildQueue {
  /**
   * Admits `job` now or throws `busy` synchronously (before returning a promise).
   * The returned promise settles with the job's outcome; the slot is free again by then.
   */
  run<T>(job: (signal: AbortSignal) => Promise<T>, options?: JobOptions): Promise<T>;
  /** Jobs running now (p-queue's `pending`). */
  readonly inFlight: number;
  /** 0 means no limit. */
  readonly capacity: number;
  /** A free slot held until a job takes it or it is released; undefined when none is free. */
  reserve(): Reservation | undefined;
  /** Called whenever a slot frees. */
  onFree(listener: () => void): void;
}

/** The in-flight gauge follows p-queue's own events: a job started ('active'), a job settled ('next'). */
function reportInFlight(queue: PQueue, capacity: number, metrics: BuildQueueOptions['metrics']): void {
  metrics?.buildsCapacity.set(capacity);
  const gauge = metrics?.buildsInFlight;
  if (gauge === undefined) return;
  gauge.set(0);
  const report = (): void => gauge.set(queue.pending);
  queue.on('active', report);
  queue.on('next', report);
}

/** Slots held before their job: counted as taken until a job takes them or they are released. */
function reservations(pending: () => number, capacity: number) {
  let reserved = 0;
  const held = new WeakSet<Reservation>();
  /** Takes `reservation`'s slot for a job (true), when it still holds one. */
  const use = (reservation: Reservation | undefined): boolean => {
    if (reservation === undefined || !held.has(reservation)) return false;
    held.delete(reservation);
    reserved -= 1;
    return true;
  };
  const reserve = (): Reservation | undefined => {
    if (capacity > 0 && pending() + reserved >= capacity) return undefined;
    reserved += 1;
    // A slot given back unused tells nobody: the queue's own pass looks again within a second.
    const reservation: Reservation = { release: () => void use(reservation) };
    held.add(reservation);
    return reservation;
  };
  return { use, reserve, reserved: () => reserved };
}

export function createBuildQueue(options: BuildQueueOptions): BuildQueue {
  const capacity = Math.max(0, Math.floor(options.maxConcurrent));
  const queue = new PQueue({ concurrency: capacity === 0 ? Number.POSITIVE_INFINITY : capacity });
  // Every job in flight listens to the shutdown signal (bounded by the capacity), and a job's own
  // signal to each of its commands (a few side by side): neither is a leak, so no warning for them.
  setMaxListeners(capacity === 0 ? 0 : capacity + 10, options.shutdownSignal);
  reportInFlight(queue, capacity, options.metrics);

  const slots = reservations(() => queue.pending, capacity);
  const listeners: (() => void)[] = [];
  queue.on('next', () => {
    for (const listener of listeners) listener();
  });
  const { use } = slots;

  return {
    get inFlight() {
      return queue.pending;
    },
    capacity,
    reserve: slots.reserve,
    onFree: (listener) => void listeners.push(listener),
    run<T>(job: (signal: AbortSignal) => Promise<T>, jobOptions: JobOptions = {}): Promise<T> {
      // Decided and started in the same synchronous step (p-queue starts a job inside add() when
      // a slot is free), so a burst can never admit more than `capacity` jobs.
      if (!use(jobOptions.reservation) && capacity > 0 && queue.pending + slots.reserved() >= capacity)
        throw serviceError('BUSY', { running: capacity }, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS });

      const controller = new AbortController();
      setMaxListeners(50, controller.signal);
      const stop = (reason: Cancellation) => () => controller.abort(reason);
      const sources: Array<[AbortSignal, () => void]> = [
        [options.shutdownSignal, stop(new Cancellation('shutdown'))],
        ...(jobOptions.signal === undefined
          ? []
          : ([[jobOptions.signal, () => controller.abort(jobOptions.signal?.reason)]] as Array<
              [AbortSignal, () => void]
            >)),
      ];
      for (const [signal, onAbort] of sources) {
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      const seconds = jobOptions.deadlineSeconds ?? 0;
      const deadline =
        seconds > 0 ? setTimeout(stop(new Cancellation('deadline', seconds)), seconds * 1000) : undefined;
      const settle = (): void => {
        clearTimeout(deadline);
        for (const [signal, onAbort] of sources) signal.removeEventListener('abort', onAbort);
      };
      // The job itself is not raced against the signal: it settles when its processes are gone.
      return queue.add(() => job(controller.signal)).finally(settle);
    },
  };
}
