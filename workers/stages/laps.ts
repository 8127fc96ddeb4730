/**
 * The laps of one build: each stage as it ended (workers/stages/table.ts), told in one service-log
 * line (`#5 clone: 80 ms`), listed in the build's record (`stages`) and in the img log's
 * `# stages:` line; and the record's phase, set from the row of the stage that begins. Where a
 * build's time goes, read by `bench:reuse` and by anyone asking why a build took as long as it did.
 */
import type { BuildReporter, BuildStage, RunningPhase } from '../../src/builds/types.js';
import type { Logger } from '../../src/observability/logger.js';
import type { StageRow } from './table.js';

const running = (phase: StageRow['phase']): phase is RunningPhase =>
  phase !== undefined && phase !== 'finished';

export class BuildLaps {
  readonly #logger: Pick<Logger, 'info'>;
  readonly #laps: BuildStage[] = [];
  #reporter: BuildReporter | undefined;
  #phase: RunningPhase | undefined;
  /** Where the laps of the job in its slot begin (the img log lists those). */
  #job = { from: 0, startedMs: performance.now() };

  constructor(logger: Pick<Logger, 'info'>) {
    this.#logger = logger;
  }

  /** The build's record, made (or adopted) in `phase`: it lists every lap so far, then each one. O(laps). */
  recorded(reporter: BuildReporter, phase: RunningPhase): void {
    if (this.#reporter !== undefined) return;
    this.#reporter = reporter;
    this.#phase = phase;
    if (this.#laps.length > 0) void reporter.details({ stages: [...this.#laps] });
  }

  /** The stage `row` begins: the record's phase becomes the row's (one update when it changes). O(1). */
  async begin(row: StageRow): Promise<void> {
    if (!running(row.phase) || row.phase === this.#phase || this.#reporter === undefined) return;
    this.#phase = row.phase;
    await this.#reporter.phase(row.phase);
  }

  /** The stage `row`, begun at `startedMs` (performance.now()), ended now: logged and listed. O(laps). */
  end(row: StageRow, startedMs: number): void {
    const lap: BuildStage = {
      number: row.number,
      name: row.name,
      startedAt: new Date(performance.timeOrigin + startedMs).toISOString(),
      durationMs: Math.round(performance.now() - startedMs),
    };
    this.#laps.push(lap);
    this.#logger.info(
      { stage: lap.name, stageNumber: lap.number, durationMs: lap.durationMs },
      `#${lap.number} ${lap.name}: ${lap.durationMs} ms`,
    );
    void this.#reporter?.details({ stages: [...this.#laps] });
  }

  /** A job begins in its slot: the img log's `# stages:` line lists its laps from here. */
  jobStarted(): void {
    this.#job = { from: this.#laps.length, startedMs: performance.now() };
  }

  /** `# stages: #5 clone 0.081 s, #6 key from the trees 0.020 s (job 0.101 s)`, one line. */
  line(): string {
    const s = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
    const laps = this.#laps
      .slice(this.#job.from)
      .map((lap) => `#${lap.number} ${lap.name} ${s(lap.durationMs)}`)
      .join(', ');
    return `# stages: ${laps || 'none'} (job ${s(performance.now() - this.#job.startedMs)})\n`;
  }
}
