/**
 * Runs one step (take a build into a free slot) again and again while it succeeds, one pass at a
 * time: a kick during a pass runs one more pass after it, never two side by side.
 */
/** Idle; a pass running; a pass running with another asked for; stopped for good. */
type PumpState = 'idle' | 'pumping' | 'again' | 'stopped';

export class Pump {
  readonly #step: () => Promise<boolean>;
  readonly #failed: (err: unknown) => void;
  #state: PumpState = 'idle';

  /** `step` answers whether it did something (then it runs again at once). */
  constructor(step: () => Promise<boolean>, failed: (err: unknown) => void) {
    this.#step = step;
    this.#failed = failed;
  }

  kick(): void {
    if (this.#state === 'stopped') return;
    if (this.#state !== 'idle') {
      this.#state = 'again';
      return;
    }
    this.#state = 'pumping';
    void this.#pass();
  }

  stop(): void {
    this.#state = 'stopped';
  }

  async #pass(): Promise<void> {
    try {
      while (this.#state !== 'stopped' && (await this.#step()));
    } catch (err) {
      this.#failed(err);
    }
    if (this.#state === 'stopped') return;
    const again = this.#state === 'again';
    this.#state = 'idle';
    if (again) this.kick();
  }
}
