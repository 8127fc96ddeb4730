/**
 * Where usage is kept: hourly buckets (hours since the epoch, UTC), each holding one counter
 * vector per row (tenant, repository, trigger), and the calendar month (UTC) budgets count in.
 * Pure.
 */
const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** One row of a bucket: what its counters are counted by. */
export interface UsageRowKey {
  readonly tenant: string;
  readonly repository: string;
  readonly trigger: string;
}

/** A bucket row as a store reads it back. */
export interface BucketRow extends UsageRowKey {
  readonly hour: number;
  readonly vector: readonly number[];
}

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);
export const hourStartMs = (hour: number): number => hour * HOUR_MS;
/** `YYYY-MM-DD` of an hour bucket. */
export const dayOfHour = (hour: number): string => new Date(hour * HOUR_MS).toISOString().slice(0, 10);

/** A row's key as a store names it: the JSON of its three parts (no separator can clash). */
export const rowId = (key: UsageRowKey): string => JSON.stringify([key.tenant, key.repository, key.trigger]);

/** The key of a store's row id; undefined when it is not one. */
export function rowKeyOf(id: string): UsageRowKey | undefined {
  try {
    const value: unknown = JSON.parse(id);
    if (!Array.isArray(value) || value.length !== 3 || !value.every((part) => typeof part === 'string'))
      return undefined;
    const [tenant, repository, trigger] = value as [string, string, string];
    return { tenant, repository, trigger };
  } catch {
    return undefined;
  }
}

/** `YYYY-MM` of a time (UTC): the month a budget counts. */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The first instant (ms) of the month of `ms`, UTC, and of the next one. */
export function monthBounds(ms: number): { start: number; end: number } {
  const date = new Date(ms);
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return { start, end };
}

/** How long a bucket is kept (ms) after its hour ends. */
export const retentionMs = (days: number): number => days * DAY_MS;
