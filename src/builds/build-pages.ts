/**
 * Pages of GET /builds, shared by the embedded and Redis registries: the order (newest start
 * first), the opaque cursor (a position in that order, so that builds starting or finishing never
 * shift a later page), and how a page is filled from candidates in order (docs/behaviour.md).
 */
import { matchesFilter, toRecord, type BuildEntry } from './records.js';
import type { BuildFilter, BuildPage, BuildRecord, PageRequest } from './types.js';

/** The page sizes GET /builds accepts (`limit`), and its default. */
export const PAGE_LIMIT = { default: 50, min: 1, max: 500 } as const;

/** Candidates examined at most for one page (a page of many builds the caller may not read stops early). */
const examineBound = (limit: number): number => Math.max(4 * limit, 500);

/** A place in the order: the start time (ms), then the id. */
export interface Position {
  readonly at: number;
  readonly id: string;
}

/** Negative when `a` comes first: the later start, then the greater id (a reversed Redis sorted set). */
export function newerFirst(first: Position, second: Position): number {
  if (first.at !== second.at) return second.at - first.at;
  if (first.id === second.id) return 0;
  return first.id > second.id ? -1 : 1;
}

const CURSOR = /^([0-9]{1,15})\.(bld-[0-9a-f-]{36})$/;

function encodeCursor(position: Position): string {
  return Buffer.from(`${position.at}.${position.id}`).toString('base64url');
}

/** The position a cursor names; undefined for any text no `next` could be. */
export function decodeCursor(text: string): Position | undefined {
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(text)) return undefined;
  const match = CURSOR.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (match === null) return undefined;
  return { at: Number(match[1]), id: match[2] as string };
}

/** A candidate in order; `entry` absent when its record is no longer kept. */
export interface Candidate {
  readonly position: Position;
  readonly entry?: BuildEntry;
}

/** Up to `count` candidates after `after` (from the newest without it), in order. */
export type CandidateReader = (after: Position | undefined, count: number) => Promise<Candidate[]>;

export interface PageScope {
  readonly filter: BuildFilter;
  readonly page: PageRequest;
  readonly nowMs: number;
  /** Finished records that finished before this are no longer listed (historyDays). */
  readonly keptSinceMs: number;
}

/** Whether a kept entry is still listed: finished within historyDays. */
export const isKept = (entry: BuildEntry, keptSinceMs: number): boolean =>
  entry.finishedAtMs === undefined || entry.finishedAtMs >= keptSinceMs;

function accepted(entry: BuildEntry | undefined, scope: PageScope): BuildRecord | undefined {
  if (entry === undefined || !isKept(entry, scope.keptSinceMs) || !matchesFilter(entry, scope.filter))
    return undefined;
  const record = toRecord(entry, scope.nowMs);
  return scope.page.visible === undefined || scope.page.visible(record) ? record : undefined;
}

/**
 * Fills a page: `limit` records the filter and `visible` accept, in order, reading candidates in
 * batches until one more is found (then `next` is the last record's position), the candidates
 * end (no `next`), or examineBound(limit) were examined (then `next` is the last one examined).
 * The first batch is the page and one more; a further one (a filter the index does not answer
 * alone, or a caller who may read few builds) as many as the share accepted so far says are still
 * needed: a page is mostly one or two reads, O(examineBound(limit)) records at worst, whatever the
 * number of builds kept.
 */
export async function fillPage(read: CandidateReader, scope: PageScope): Promise<BuildPage> {
  const { limit } = scope.page;
  const bound = examineBound(limit);
  const builds: BuildRecord[] = [];
  let position = scope.page.after === undefined ? undefined : decodeCursor(scope.page.after);
  let examined = 0;
  let lastOnPage: Position | undefined;
  while (examined < bound) {
    const wanted = limit + 1 - builds.length;
    const guess = examined === 0 ? wanted : Math.ceil((wanted * examined) / Math.max(1, builds.length)) + 8;
    const count = Math.min(bound - examined, guess);
    const batch = await read(position, count);
    for (const candidate of batch) {
      examined += 1;
      position = candidate.position;
      const record = accepted(candidate.entry, scope);
      if (record === undefined) continue;
      if (builds.length === limit) return { builds, next: encodeCursor(lastOnPage as Position) };
      builds.push(record);
      lastOnPage = candidate.position;
    }
    if (batch.length < count) return { builds };
  }
  return position === undefined ? { builds } : { builds, next: encodeCursor(position) };
}
