/**
 * The time a build spends in each stage of its job (workers/build-flow.ts), for the img log's
 * `# stages:` line: where an answer's time goes, read by `bench:reuse` and by anyone asking why
 * a build took as long as it did.
 */
export class StageClock {
  #last = performance.now();
  readonly #started = this.#last;
  readonly #laps: Array<[stage: string, ms: number]> = [];

  /** Ends the stage `name` now (it began when the previous one ended). */
  lap(name: string): void {
    const now = performance.now();
    this.#laps.push([name, now - this.#last]);
    this.#last = now;
  }

  /** `# stages: clone 0.081 s, key 0.020 s (job 0.101 s)`, one line. */
  line(): string {
    const s = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
    const laps = this.#laps.map(([stage, ms]) => `${stage} ${s(ms)}`).join(', ');
    return `# stages: ${laps || 'none'} (job ${s(performance.now() - this.#started)})\n`;
  }
}
