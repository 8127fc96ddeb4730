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

/** A span a store reads: a whole day's bucket (its first hour), or one hour's. */
export interface Span {
  readonly kind: 'day' | 'hour';
  /** The day (days since the epoch) or the hour. */
  readonly index: number;
  /** The first hour it covers. */
  readonly hour: number;
}

/** The spans of [fromHour, toHour): whole days from their day buckets, the edges hour by hour. */
export function spansOf(fromHour: number, toHour: number): Span[] {
  const spans: Span[] = [];
  let hour = fromHour;
  while (hour < toHour) {
    if (hour % 24 === 0 && hour + 24 <= toHour) {
      spans.push({ kind: 'day', index: hour / 24, hour });
      hour += 24;
    } else {
      spans.push({ kind: 'hour', index: hour, hour });
      hour += 1;
    }
  }
  return spans;
}

/** The day (days since the epoch) of an hour. */
export const dayIndexOf = (hour: number): number => Math.floor(hour / 24);

/** Reads row ids back, each once per read (a read meets the same rows hour after hour). */
export function rowKeyReader(): (id: string) => UsageRowKey | undefined {
  const seen = new Map<string, UsageRowKey | undefined>();
  return (id) => {
    if (!seen.has(id)) seen.set(id, rowKeyOf(id));
    return seen.get(id);
  };
}

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
