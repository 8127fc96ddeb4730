/**
 * The embedded build registry: this instance's running builds and its newest `history` finished
 * ones (for at most `historyDays`), in memory (they do not survive the process, like command
 * logs), listed a page at a time as in Redis mode. Created at start-up.
 */
import { fillPage, isKept, newerFirst, type Candidate, type Position } from './build-pages.js';
import { finishedWithin, FinishWaiters } from './finish-wait.js';
import { newBuildEntry, toRecord, type BuildEntry } from './records.js';
import type {
  BuildChange,
  BuildFilter,
  BuildOutcome,
  BuildPage,
  BuildRecord,
  BuildRegistry,
  BuildUpdate,
  KeyReservation,
  NewBuild,
  PageRequest,
} from './types.js';

export interface MemoryRegistryOptions {
  /** Finished builds kept (the newest). */
  readonly history: number;
  /** Days a finished build is kept at most (default: no limit). */
  readonly historyDays?: number;
  /** Milliseconds since the epoch (tests pass a fake clock). */
  readonly now?: () => number;
}

/** The entry of a build that just finished. */
function finishedEntry(entry: BuildEntry, outcome: BuildOutcome, nowMs: number): BuildEntry {
  entry.phase = 'finished';
  entry.outcome = outcome;
  entry.finishedAtMs = nowMs;
  if (outcome.image !== undefined) entry.image = outcome.image;
  return entry;
}

/** Merges what a running build learned into its entry. */
function applyUpdate(entry: BuildEntry | undefined, update: BuildUpdate): void {
  if (entry === undefined) return;
  if (update.phase !== undefined) entry.phase = update.phase;
  if (update.branch !== undefined) entry.branch = update.branch;
  if (update.commit !== undefined) entry.commit = update.commit;
  if (update.image !== undefined) entry.image = update.image;
  if (update.gitCloneLogId !== undefined) entry.gitCloneLogId = update.gitCloneLogId;
  if (update.imageBuildLogId !== undefined) entry.imageBuildLogId = update.imageBuildLogId;
  if (update.builder !== undefined) entry.builder = update.builder;
  if (update.builders !== undefined) entry.builders = update.builders;
  if (update.details !== undefined) entry.details = update.details;
}

/** Idempotency-Keys: the body digest and the build's id; dropped with the build's record. */
class MemoryKeys {
  readonly #keys = new Map<
    string,
    { readonly digest: string; readonly token?: string; readonly buildId?: string }
  >();

  async reserve(
    key: string,
    digest: string,
    token: string,
    get: (id: string) => Promise<BuildRecord | undefined>,
  ): Promise<KeyReservation> {
    const held = this.#keys.get(key);
    if (held !== undefined && (held.buildId === undefined || (await get(held.buildId)) !== undefined)) {
      const bound = held.buildId === undefined ? {} : { buildId: held.buildId };
      return { kind: 'taken', sameBody: held.digest === digest, ...bound };
    }
    this.#keys.set(key, { digest, token });
    return { kind: 'reserved', token };
  }

  bind(key: string, buildId: string): void {
    const held = this.#keys.get(key);
    if (held !== undefined) this.#keys.set(key, { digest: held.digest, buildId });
  }

  /** Frees a key no build was bound to while `token` holds it (a bound or newer reservation stays). */
  release(key: string, token: string): void {
    const held = this.#keys.get(key);
    if (held?.buildId === undefined && held?.token === token) this.#keys.delete(key);
  }

  /** A finished record left the history: its key goes with it. */
  dropped(entry: BuildEntry): void {
    const key = entry.idempotencyKey;
    if (key !== undefined && this.#keys.get(key)?.buildId === entry.id) this.#keys.delete(key);
  }
}

/** A queued entry taken to run (phase cloning); false when it is not queued. */
function adoptQueued(entry: BuildEntry | undefined): boolean {
  if (entry === undefined || entry.phase !== 'queued') return false;
  entry.phase = 'cloning';
  return true;
}

const DAY_MS = 24 * 3600 * 1000;
const positionOf = (entry: BuildEntry): Position => ({ at: entry.startedAtMs, id: entry.id });

/** Every kept entry, newest start first: a page is a binary search, then a walk. */
class OrderedEntries {
  readonly #entries: BuildEntry[] = [];

  /** The index of the first entry after `position` (0 without one). O(log n). */
  #after(position: Position | undefined): number {
    if (position === undefined) return 0;
    let low = 0;
    let high = this.#entries.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (newerFirst(positionOf(this.#entries[mid] as BuildEntry), position) <= 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  add(entry: BuildEntry): void {
    this.#entries.splice(this.#after(positionOf(entry)), 0, entry);
  }

  remove(entry: BuildEntry): void {
    const at = this.#after(positionOf(entry)) - 1;
    if (this.#entries[at] === entry) this.#entries.splice(at, 1);
  }

  read(after: Position | undefined, count: number): Candidate[] {
    const start = this.#after(after);
    return this.#entries.slice(start, start + count).map((entry) => ({ position: positionOf(entry), entry }));
  }
}

/** The kept entries: by id, in order, the finished ones by finish, and the logs' owners. */
class MemoryRegistry implements BuildRegistry {
  readonly #now: () => number;
  readonly #history: number;
  readonly #keptMs: number;
  readonly #running = new Map<string, BuildEntry>();
  /** Oldest finished first. */
  readonly #finished: BuildEntry[] = [];
  readonly #byId = new Map<string, BuildEntry>();
  readonly #byLog = new Map<string, BuildEntry>();
  readonly #ordered = new OrderedEntries();
  readonly #waiting = new FinishWaiters();
  readonly #keys = new MemoryKeys();
  readonly #listeners = new Set<(change: BuildChange) => void>();

  constructor(options: MemoryRegistryOptions) {
    this.#now = options.now ?? Date.now;
    this.#history = Math.max(0, Math.floor(options.history));
    this.#keptMs = options.historyDays === undefined ? Infinity : options.historyDays * DAY_MS;
  }

  #changed(entry: BuildEntry | undefined): void {
    if (entry === undefined) return;
    for (const listener of this.#listeners) listener({ id: entry.id, repository: entry.repository });
  }

  #drop(entry: BuildEntry): void {
    this.#byId.delete(entry.id);
    for (const log of [entry.gitCloneLogId, entry.imageBuildLogId])
      if (log !== undefined && this.#byLog.get(log) === entry) this.#byLog.delete(log);
    this.#ordered.remove(entry);
    this.#keys.dropped(entry);
  }

  /** The oldest finished entries beyond `history` or older than historyDays leave. */
  #trim(): void {
    const since = this.#now() - this.#keptMs;
    for (;;) {
      const oldest = this.#finished[0];
      if (oldest === undefined) return;
      if (this.#finished.length <= this.#history && isKept(oldest, since)) return;
      this.#drop(oldest);
      this.#finished.shift();
    }
  }

  async start(build: NewBuild): Promise<string> {
    const entry = newBuildEntry(build, this.#now());
    this.#running.set(entry.id, entry);
    this.#byId.set(entry.id, entry);
    this.#ordered.add(entry);
    this.#changed(entry);
    return entry.id;
  }

  async update(id: string, update: BuildUpdate): Promise<void> {
    const entry = this.#running.get(id);
    applyUpdate(entry, update);
    if (entry === undefined) return;
    for (const log of [update.gitCloneLogId, update.imageBuildLogId])
      if (log !== undefined) this.#byLog.set(log, entry);
    this.#changed(entry);
  }

  async adopt(id: string): Promise<boolean> {
    const adopted = adoptQueued(this.#running.get(id));
    if (adopted) this.#changed(this.#running.get(id));
    return adopted;
  }

  async addWaiters(id: string, delta: number): Promise<void> {
    const entry = this.#running.get(id);
    if (entry !== undefined) entry.waiters = Math.max(0, entry.waiters + delta);
    this.#changed(entry);
  }

  async finish(id: string, outcome: BuildOutcome): Promise<void> {
    const entry = this.#running.get(id);
    if (entry === undefined) return;
    this.#running.delete(id);
    this.#finished.push(finishedEntry(entry, outcome, this.#now()));
    this.#trim();
    this.#changed(entry);
    this.#waiting.finished(id);
  }

  get = async (id: string): Promise<BuildRecord | undefined> => {
    this.#trim();
    const entry = this.#byId.get(id);
    return entry === undefined ? undefined : toRecord(entry, this.#now());
  };

  waitFinished(id: string, ms: number, signal?: AbortSignal): Promise<BuildRecord | undefined> {
    return finishedWithin(this.get, id, ms, signal, this.#waiting.watch(id));
  }

  reserveKey(key: string, digest: string, token: string): Promise<KeyReservation> {
    return this.#keys.reserve(key, digest, token, this.get);
  }

  async bindKey(key: string, buildId: string): Promise<void> {
    this.#keys.bind(key, buildId);
  }

  async releaseKey(key: string, token: string): Promise<void> {
    this.#keys.release(key, token);
  }

  // One instance: every build it runs is cancelled by the worker that runs it.
  async requestCancel(): Promise<void> {}
  onCancel(): void {}
  onLost(): void {}

  async list(filter: BuildFilter, page: PageRequest): Promise<BuildPage> {
    this.#trim();
    const nowMs = this.#now();
    const read = async (after: Position | undefined, count: number) => this.#ordered.read(after, count);
    return fillPage(read, { filter, page, nowMs, keptSinceMs: nowMs - this.#keptMs });
  }

  async ownerOfLog(logId: string): Promise<BuildRecord | undefined> {
    this.#trim();
    const entry = this.#byLog.get(logId);
    return entry === undefined ? undefined : toRecord(entry, this.#now());
  }

  async watchChanges(listener: (change: BuildChange) => void): Promise<() => void> {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }
}

export function createMemoryBuildRegistry(options: MemoryRegistryOptions): BuildRegistry {
  return new MemoryRegistry(options);
}
