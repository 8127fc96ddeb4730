/**
 * GET /usage's answer from bucket rows (docs/usage.md): rows grouped by tenant and the asked
 * dimensions (repository, trigger, day), sorted, and their total; and the same rows as CSV
 * (RFC 4180, one header line). Pure: O(bucket rows).
 */
import { dayOfHour, type BucketRow } from './buckets.js';
import { addInto, COUNTERS, countersOf, zeroVector, type Counters } from './counters.js';

export const USAGE_DIMENSIONS = ['tenant', 'repository', 'trigger', 'day'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface UsageRow extends Counters {
  readonly tenant: string;
  readonly repository?: string;
  readonly trigger?: string;
  readonly day?: string;
}

export interface UsageReport {
  readonly from: string;
  readonly to: string;
  readonly by: readonly UsageDimension[];
  readonly rows: readonly UsageRow[];
  readonly total: Counters;
}

/** Each row's grouping values: the tenant always, then the asked dimensions. */
function groupOf(row: BucketRow, by: readonly UsageDimension[], day: string): Record<string, string> {
  const group: Record<string, string> = { tenant: row.tenant };
  if (by.includes('repository')) group.repository = row.repository;
  if (by.includes('trigger')) group.trigger = row.trigger;
  if (by.includes('day')) group.day = day;
  return group;
}

export function usageReport(
  buckets: readonly BucketRow[],
  query: { readonly from: string; readonly to: string; readonly by: readonly UsageDimension[] },
): UsageReport {
  const groups = new Map<string, { group: Record<string, string>; vector: number[] }>();
  const days = new Map<number, string>();
  const total = zeroVector();
  for (const bucket of buckets) {
    let day = days.get(bucket.hour);
    if (day === undefined) days.set(bucket.hour, (day = dayOfHour(bucket.hour)));
    const group = groupOf(bucket, query.by, day);
    // NUL never occurs in a tenant, a repository, a trigger or a day: the parts cannot run together.
    const id = USAGE_DIMENSIONS.map((name) => group[name] ?? '').join('\u0000');
    let entry = groups.get(id);
    if (entry === undefined) groups.set(id, (entry = { group, vector: zeroVector() }));
    addInto(entry.vector, bucket.vector);
    addInto(total, bucket.vector);
  }
  const sorted = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    from: query.from,
    to: query.to,
    by: query.by,
    rows: sorted.map(([, { group, vector }]) => ({ ...group, ...countersOf(vector) }) as UsageRow),
    total: countersOf(total),
  };
}

/** A CSV field: quoted when it holds a comma, a quote, or a line break (RFC 4180). */
const csvField = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;

/** The report's rows as CSV: the grouping columns, then each counter's column (with its unit). */
export function usageCsv(report: UsageReport): string {
  const dimensions = USAGE_DIMENSIONS.filter((name) => name === 'tenant' || report.by.includes(name));
  const header = [...dimensions, ...COUNTERS.map(({ column }) => column)];
  const lines = report.rows.map((row) => [
    ...dimensions.map((name) => row[name] ?? ''),
    ...COUNTERS.map(({ name }) => String(row[name])),
  ]);
  return [header, ...lines].map((fields) => `${fields.map(csvField).join(',')}\r\n`).join('');
}
