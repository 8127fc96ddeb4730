/**
 * The one helper the flow starts each stage with: the record's phase set from the stage's row,
 * then the stage, then its lap (its number, name and duration) logged and listed in the record.
 * A stage that throws leaves no lap: the answer tells how it failed.
 */
import type { BuildLaps } from './laps.js';
import type { StageRow } from './table.js';

/** Runs `fn` as the stage `row` of the build whose laps `job` holds; its value. */
export async function stage<T>(
  job: { readonly laps: BuildLaps },
  row: StageRow,
  fn: () => Promise<T>,
): Promise<T> {
  await job.laps.begin(row);
  const started = performance.now();
  const value = await fn();
  job.laps.end(row, started);
  return value;
}
