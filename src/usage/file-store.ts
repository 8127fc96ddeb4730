/**
 * The embedded usage store: the buckets, the month totals, the made images' and ran steps' times in
 * memory, and a journal in the scratch space (USAGE_FILE, one JSON line per build) that a restart
 * reads back, then rewrites compacted (one line per bucket row, image and step), dropping what is
 * older than the retention. A line cut short by a crash is skipped.
 */
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  dayIndexOf,
  hourOf,
  hourStartMs,
  monthOf,
  rowKeyOf,
  rowKeyReader,
  spansOf,
  type BucketRow,
} from './buckets.js';
import { addInto, COUNTERS, packVector, unpackVector } from './counters.js';
import type { UsageStore, UsageWrite, WriteResult } from './store.js';

export const USAGE_FILE = 'usage.jsonl';
/** Images and steps whose times are kept (the oldest written first forgotten). */
const MAX_TIMES = 100_000;
/** Build ids remembered as counted (a build ends once per process; this guards a repeat). */
const MAX_COUNTED = 100_000;
const RUN_INDEX = COUNTERS.findIndex(({ name }) => name === 'runSeconds');

type Line =
  | { readonly t: 'row'; readonly h: number; readonly r: string; readonly v: string }
  | { readonly t: 'time'; readonly k: string; readonly s: number; readonly at: number }
  | { readonly t: 'build'; readonly w: UsageWrite; readonly at: number };

/** A map that forgets its oldest entry beyond `max`; setting a key again makes it the newest. */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

export class FileUsageStore implements UsageStore {
  readonly #file: string;
  readonly #retentionMs: number;
  readonly #now: () => number;
  /** hour -> row id -> counters. */
  readonly #hours = new Map<number, Map<string, number[]>>();
  /** day -> row id -> counters: the same sums a day at a time (a long range reads these). */
  readonly #days = new Map<number, Map<string, number[]>>();
  /** `<month> <tenant>` -> run seconds. */
  readonly #months = new Map<string, number>();
  /** `image:<ref>` or `step:<id>` -> seconds, and when written (ms). */
  readonly #times = new Map<string, { s: number; at: number }>();
  readonly #counted = new Map<string, true>();
  #loaded: Promise<void> | undefined;

  constructor(scratchDir: string, retentionMs: number, now: () => number = Date.now) {
    this.#file = join(scratchDir, USAGE_FILE);
    this.#retentionMs = retentionMs;
    this.#now = now;
  }

  /** Reads the journal once, then rewrites it compacted (O(lines) at start-up). */
  #load(): Promise<void> {
    this.#loaded ??= (async () => {
      let text = '';
      try {
        text = await readFile(this.#file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      for (const line of text.split('\n')) this.#replay(line);
      await this.#compact();
    })();
    return this.#loaded;
  }

  #replay(text: string): void {
    if (text.trim() === '') return;
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      return; // cut short by a crash
    }
    const oldest = this.#now() - this.#retentionMs;
    if (line.t === 'row' && hourStartMs(line.h) >= oldest) this.#addRow(line.h, line.r, unpackVector(line.v));
    if (line.t === 'time' && line.at >= oldest)
      setBounded(this.#times, line.k, { s: line.s, at: line.at }, MAX_TIMES);
    if (line.t === 'build' && hourStartMs(line.w.hour) >= oldest) this.#apply(line.w, line.at);
  }

  #addRow(hour: number, rowId: string, vector: readonly number[]): void {
    for (const [buckets, index] of [
      [this.#hours, hour],
      [this.#days, dayIndexOf(hour)],
    ] as const) {
      let rows = buckets.get(index);
      if (rows === undefined) {
        buckets.set(index, (rows = new Map()));
        this.#forgetOld();
      }
      const into = rows.get(rowId) ?? COUNTERS.map(() => 0);
      addInto(into, vector);
      rows.set(rowId, into);
    }
    const tenant = rowKeyOf(rowId)?.tenant;
    if (tenant === undefined) return;
    const month = `${monthOf(hourStartMs(hour))} ${tenant}`;
    this.#months.set(month, (this.#months.get(month) ?? 0) + (vector[RUN_INDEX] ?? 0));
  }

  /** Drops the buckets past the retention: O(buckets kept), once each time a new bucket starts. */
  #forgetOld(): void {
    const oldestHour = hourOf(this.#now() - this.#retentionMs);
    for (const hour of this.#hours.keys()) if (hour < oldestHour) this.#hours.delete(hour);
    for (const day of this.#days.keys()) if ((day + 1) * 24 <= oldestHour) this.#days.delete(day);
  }

  #apply(write: UsageWrite, at: number): void {
    setBounded(this.#counted, write.buildId, true, MAX_COUNTED);
    this.#addRow(write.hour, write.rowId, write.vector);
    for (const ref of write.madeImage?.refs ?? [])
      setBounded(this.#times, `image:${ref}`, { s: write.madeImage?.runSeconds ?? 0, at }, MAX_TIMES);
    for (const step of write.ranSteps)
      setBounded(this.#times, `step:${step.id}`, { s: step.seconds, at }, MAX_TIMES);
  }

  async #compact(): Promise<void> {
    const lines: string[] = [];
    for (const [h, rows] of this.#hours)
      for (const [r, v] of rows) lines.push(JSON.stringify({ t: 'row', h, r, v: packVector(v) }));
    for (const [k, { s, at }] of this.#times) lines.push(JSON.stringify({ t: 'time', k, s, at }));
    const temporary = `${this.#file}.tmp`;
    await writeFile(temporary, lines.map((line) => `${line}\n`).join(''));
    await rename(temporary, this.#file);
  }

  async savedTimes(
    imageRefs: readonly string[],
    stepIds: readonly string[],
  ): Promise<{ image?: number; steps: (number | undefined)[] }> {
    await this.#load();
    const image = imageRefs.map((ref) => this.#times.get(`image:${ref}`)?.s).find((s) => s !== undefined);
    const steps = stepIds.map((id) => this.#times.get(`step:${id}`)?.s);
    return { ...(image === undefined ? {} : { image }), steps };
  }

  async add(write: UsageWrite): Promise<WriteResult> {
    await this.#load();
    const monthKey = `${write.month} ${write.tenant}`;
    if (this.#counted.has(write.buildId))
      return { counted: false, monthRunSeconds: this.#months.get(monthKey) ?? 0 };
    const at = this.#now();
    this.#apply(write, at);
    await appendFile(this.#file, `${JSON.stringify({ t: 'build', w: write, at })}\n`);
    return { counted: true, monthRunSeconds: this.#months.get(monthKey) ?? 0 };
  }

  async read(fromHour: number, toHour: number): Promise<BucketRow[]> {
    await this.#load();
    const out: BucketRow[] = [];
    const keyOf = rowKeyReader();
    for (const span of spansOf(fromHour, toHour)) {
      const rows = (span.kind === 'day' ? this.#days : this.#hours).get(span.index);
      for (const [id, vector] of rows ?? []) {
        const key = keyOf(id);
        if (key !== undefined) out.push({ ...key, hour: span.hour, vector });
      }
    }
    return out;
  }

  async monthRunSeconds(tenant: string, month: string): Promise<number> {
    await this.#load();
    return this.#months.get(`${month} ${tenant}`) ?? 0;
  }

  async close(): Promise<void> {
    await this.#loaded?.catch(() => undefined);
  }
}
