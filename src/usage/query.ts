/**
 * GET /usage's parameters (docs/usage.md): `from` and `to` (an ISO date, or a date-time on the
 * hour in UTC; `to` exclusive; default the current month, UTC) and `by` (a comma-separated list of
 * tenant, repository, trigger, day). Anything else is a 400 naming the parameters at fault. Pure.
 */
import { serviceError } from '../errors/errors.js';
import { MAX_USAGE_RANGE_DAYS } from '../rules/usage-query.js';
import { hourOf, monthBounds } from './buckets.js';
import { USAGE_DIMENSIONS, type UsageDimension } from './report.js';

const PARAMETERS = ['from', 'to', 'by'] as const;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):00(?::00(?:\.0+)?)?Z)?$/;

export interface UsageQuery {
  readonly fromHour: number;
  readonly toHour: number;
  readonly from: string;
  readonly to: string;
  readonly by: readonly UsageDimension[];
}

/** The instant (ms) of a date or a date-time on the hour; undefined when it is neither. */
function instantOf(text: string): number | undefined {
  const match = INSTANT.exec(text);
  if (match === null) return undefined;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const h = match[4] === undefined ? 0 : Number(match[4]);
  const ms = Date.UTC(y, m - 1, d, h);
  const date = new Date(ms);
  // 2026-02-30 rolls over: not a date.
  const exact = date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
  return exact && h < 24 ? ms : undefined;
}

function dimensionsOf(text: string): UsageDimension[] | undefined {
  const names = text.split(',');
  if (names.some((name) => !(USAGE_DIMENSIONS as readonly string[]).includes(name))) return undefined;
  if (new Set(names).size !== names.length) return undefined;
  return USAGE_DIMENSIONS.filter((name) => names.includes(name));
}

const isoHour = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The query of koa's parsed `query` (a repeated parameter is an array, hence refused) at `now`. */
export function parseUsageQuery(query: Readonly<Record<string, unknown>>, now: number): UsageQuery {
  const bad = new Set<string>();
  for (const name of Object.keys(query))
    if (!(PARAMETERS as readonly string[]).includes(name)) bad.add('other');
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') bad.add(name);
    return typeof value === 'string' ? value : undefined;
  };
  const month = monthBounds(now);
  const [fromText, toText, byText] = [text('from'), text('to'), text('by')];
  const from = fromText === undefined ? month.start : instantOf(fromText);
  const to = toText === undefined ? month.end : instantOf(toText);
  const by = byText === undefined ? ['tenant' as const] : dimensionsOf(byText);
  if (from === undefined) bad.add('from');
  if (to === undefined) bad.add('to');
  if (by === undefined) bad.add('by');
  if (from !== undefined && to !== undefined && (to <= from || to - from > MAX_USAGE_RANGE_DAYS * 86_400_000))
    bad.add('to');
  if (bad.size > 0 || from === undefined || to === undefined || by === undefined)
    throw serviceError('INVALID_USAGE_QUERY', { parameters: [...bad] });
  return { fromHour: hourOf(from), toHour: hourOf(to), from: isoHour(from), to: isoHour(to), by };
}
