/**
 * The time a build spends in each stage of its job (workers/build-flow.ts), for the img log's
 * `# stages:` line and the build record's `stages`: where an answer's time goes, read by
 * `bench:reuse` and by anyone asking why a build took as long as it did.
 */
/** One stage as it ended: its name, when it began (ISO 8601, UTC), how long it took. */
export interface Lap {
  readonly name: string;
  readonly startedAt: string;
  readonly durationMs: number;
}

export class StageClock {
  #last = performance.now();
  readonly #started = this.#last;
  readonly #laps: Array<[stage: string, ms: number]> = [];
  readonly #onLap: ((stage: Lap) => void) | undefined;

  /** `onLap` hears of each stage as it ends (the build's record lists them). */
  constructor(onLap?: (stage: Lap) => void) {
    this.#onLap = onLap;
  }

  /** Ends the stage `name` now (it began when the previous one ended). */
  lap(name: string): void {
    const now = performance.now();
    this.#laps.push([name, now - this.#last]);
    this.#onLap?.({
      name,
      startedAt: new Date(performance.timeOrigin + this.#last).toISOString(),
      durationMs: Math.round(now - this.#last),
    });
    this.#last = now;
  }

  /** `# stages: clone 0.081 s, key 0.020 s (job 0.101 s)`, one line. */
  line(): string {
    const s = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
    const laps = this.#laps.map(([stage, ms]) => `${stage} ${s(ms)}`).join(', ');
    return `# stages: ${laps || 'none'} (job ${s(performance.now() - this.#started)})\n`;
  }
}
