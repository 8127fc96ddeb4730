/**
 * The usage counters (docs/usage.md): their names in JSON and CSV, in one order, and the arithmetic
 * of a bucket's counters (added, summed, packed for a store). Pure.
 */

/** Each counter: its JSON name and its CSV column (snake_case, with its unit). */
export const COUNTERS = [
  { name: 'builds', column: 'builds' },
  { name: 'reused', column: 'reused' },
  { name: 'failed', column: 'failed' },
  { name: 'queuedSeconds', column: 'queued_seconds' },
  { name: 'runSeconds', column: 'run_seconds' },
  { name: 'executedStepSeconds', column: 'executed_step_seconds' },
  { name: 'cachedSteps', column: 'cached_steps' },
  { name: 'totalSteps', column: 'total_steps' },
  { name: 'pushedBytes', column: 'pushed_bytes' },
  { name: 'savedSeconds', column: 'saved_seconds' },
] as const;

export type CounterName = (typeof COUNTERS)[number]['name'];
export type Counters = Readonly<Record<CounterName, number>>;

/** The counters in COUNTERS' order, as the stores keep them. */
export type CounterVector = readonly number[];

export const zeroVector = (): number[] => COUNTERS.map(() => 0);

/** Seconds kept to the millisecond, counts and bytes as whole numbers. */
const rounded = (value: number): number => Math.round(value * 1000) / 1000;

export function countersOf(vector: CounterVector): Counters {
  return Object.fromEntries(COUNTERS.map(({ name }, i) => [name, rounded(vector[i] ?? 0)])) as Counters;
}

/** Adds `more` into `into` (same order), in place. */
export function addInto(into: number[], more: CounterVector): void {
  for (let i = 0; i < COUNTERS.length; i += 1) into[i] = (into[i] ?? 0) + (more[i] ?? 0);
}

/** A vector as a store keeps it: its numbers, comma-separated. */
export const packVector = (vector: CounterVector): string => vector.map((n) => rounded(n)).join(',');

/** A packed vector read back; a part that is no number reads as 0. */
export function unpackVector(text: string): number[] {
  const parts = text.split(',');
  return COUNTERS.map((_, index) => {
    const value = Number(parts[index]);
    return Number.isFinite(value) ? value : 0;
  });
}
