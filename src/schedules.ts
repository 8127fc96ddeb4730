/**
 * The one periodic runner of the service: every tick this instance asks the schedule lock; its
 * holder runs the passes due (the prebuild passes, retention), those of one lane one after the
 * other, and a pass whose lane still runs waits for the next tick. Stopping waits for the passes
 * in flight, so nothing of them still runs (or writes in the scratch space) once stop() resolves.
 */
import type { Logger } from './observability/logger.js';
import type { ScheduledPass, ScheduleLock } from './prebuilds/schedule-lock.js';

export class PeriodicRunner {
  readonly #lock: ScheduleLock;
  readonly #passes: readonly ScheduledPass[];
  readonly #logger: Logger;
  /** When each pass is due next. */
  readonly #due = new Map<string, number>();
  #held = false;
  /** The lanes in flight. */
  readonly #running = new Map<string, Promise<void>>();
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(lock: ScheduleLock, passes: readonly ScheduledPass[], logger: Logger) {
    this.#lock = lock;
    this.#passes = passes;
    this.#logger = logger;
  }

  /** Ticks every `tickMs` until `signal` aborts (the lock is then let go). */
  start(tickMs: number, signal: AbortSignal): void {
    const tick = (): void => void this.tick();
    this.#timer = setInterval(tick, tickMs);
    this.#timer.unref();
    signal.addEventListener('abort', () => void this.stop(), { once: true });
    tick();
  }

  /** Stops ticking, waits for the passes in flight, then lets the lock go. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await Promise.all(this.#running.values());
    if (this.#held) await this.#lock.release().catch(() => undefined);
    this.#held = false;
  }

  /** Renews (or takes) the lock, then starts the passes due of each lane that is not running. */
  async tick(): Promise<void> {
    if (this.#stopped) return;
    let held: boolean;
    try {
      held = await this.#lock.hold();
    } catch (err) {
      this.#logger.warn({ err }, 'schedules: the lock could not be asked');
      held = false;
    }
    if (held && !this.#held) {
      this.#logger.info({}, 'schedules: this instance runs them');
      const now = Date.now();
      for (const pass of this.#passes) this.#due.set(pass.name, pass.atOnce ? 0 : now + pass.intervalMs);
    }
    this.#held = held;
    if (!held || this.#stopped) return;
    const started = [...new Set(this.#passes.map((pass) => pass.lane))]
      .filter((lane) => !this.#running.has(lane))
      .map((lane) => this.#runLane(lane));
    await Promise.all(started);
  }

  #runLane(lane: string): Promise<void> {
    const running = this.#runDue(this.#passes.filter((pass) => pass.lane === lane))
      .catch((err: unknown) => this.#logger.warn({ err, lane }, 'schedules: pass failed'))
      .finally(() => this.#running.delete(lane));
    this.#running.set(lane, running);
    return running;
  }

  async #runDue(passes: readonly ScheduledPass[]): Promise<void> {
    for (const pass of passes) {
      if (!this.#held || this.#stopped) return;
      const now = Date.now();
      if ((this.#due.get(pass.name) ?? 0) > now) continue;
      this.#due.set(pass.name, now + pass.intervalMs);
      const started = performance.now();
      await pass.run(this.#logger);
      this.#logger.info(
        { pass: pass.name, durationMs: Math.round(performance.now() - started) },
        'schedules: pass done',
      );
    }
  }
}
