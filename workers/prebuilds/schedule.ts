/**
 * The prebuild schedules: every tick this instance asks the schedule lock; the holder runs a
 * reconcile and a refresh at once when it takes the lock (at startup, or after the holder died),
 * then each every its interval. Passes never overlap; stopping waits for the pass in flight, so
 * nothing of it still runs (or writes in the scratch space) once stop() resolves.
 */
import type { Logger } from '../../src/observability/logger.js';
import type { ScheduleLock } from '../../src/prebuilds/schedule-lock.js';

export interface ScheduledPass {
  readonly name: 'reconcile' | 'refresh';
  readonly intervalMs: number;
  run(logger: Logger): Promise<void>;
}

export class PrebuildSchedule {
  readonly #lock: ScheduleLock;
  readonly #passes: readonly ScheduledPass[];
  readonly #logger: Logger;
  /** When each pass is due next (0: at once). */
  readonly #due = new Map<string, number>();
  #held = false;
  /** The passes in flight, if any (never two at once). */
  #passing: Promise<void> | undefined;
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
    await this.#passing;
    if (this.#held) await this.#lock.release().catch(() => undefined);
    this.#held = false;
  }

  /** Renews (or takes) the lock, then starts the passes due unless some still run. */
  async tick(): Promise<void> {
    if (this.#stopped) return;
    let held: boolean;
    try {
      held = await this.#lock.hold();
    } catch (err) {
      this.#logger.warn({ err }, 'prebuild schedules: the lock could not be asked');
      held = false;
    }
    if (held && !this.#held) {
      this.#logger.info({}, 'prebuild schedules: this instance runs them');
      this.#due.clear();
    }
    this.#held = held;
    if (!held || this.#stopped || this.#passing !== undefined) return;
    this.#passing = this.#runDue()
      .catch((err: unknown) => this.#logger.warn({ err }, 'prebuild schedules: pass failed'))
      .finally(() => {
        this.#passing = undefined;
      });
    await this.#passing;
  }

  async #runDue(): Promise<void> {
    for (const pass of this.#passes) {
      if (!this.#held || this.#stopped) return;
      const now = Date.now();
      if ((this.#due.get(pass.name) ?? 0) > now) continue;
      this.#due.set(pass.name, now + pass.intervalMs);
      const started = performance.now();
      await pass.run(this.#logger);
      this.#logger.info(
        { pass: pass.name, durationMs: Math.round(performance.now() - started) },
        'prebuild pass done',
      );
    }
  }
}
