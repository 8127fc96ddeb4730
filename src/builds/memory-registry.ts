/**
 * The embedded build registry: this instance's running builds and its newest `history` finished
 * ones, in memory (they do not survive the process, like command logs). Created at start-up.
 */
import { finishedWithin, FinishWaiters } from './finish-wait.js';
import { matchesFilter, newBuildEntry, toRecord, type BuildEntry } from './records.js';
import type { BuildOutcome, BuildRecord, BuildRegistry, BuildUpdate, KeyReservation } from './types.js';

export interface MemoryRegistryOptions {
  /** Finished builds kept (the newest). */
  readonly history: number;
  /** Milliseconds since the epoch (tests pass a fake clock). */
  readonly now?: () => number;
}

/** The entry of a build that just finished. */
function finishedEntry(entry: BuildEntry, outcome: BuildOutcome): BuildEntry {
  entry.phase = 'finished';
  entry.outcome = outcome;
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
  readonly #keys = new Map<string, { readonly digest: string; readonly buildId?: string }>();

  async reserve(
    key: string,
    digest: string,
    get: (id: string) => Promise<BuildRecord | undefined>,
  ): Promise<KeyReservation> {
    const held = this.#keys.get(key);
    if (held !== undefined && (held.buildId === undefined || (await get(held.buildId)) !== undefined)) {
      const bound = held.buildId === undefined ? {} : { buildId: held.buildId };
      return { kind: 'taken', sameBody: held.digest === digest, ...bound };
    }
    this.#keys.set(key, { digest });
    return { kind: 'reserved' };
  }

  bind(key: string, buildId: string): void {
    const held = this.#keys.get(key);
    if (held !== undefined) this.#keys.set(key, { digest: held.digest, buildId });
  }

  release(key: string): void {
    this.#keys.delete(key);
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

export function createMemoryBuildRegistry(options: MemoryRegistryOptions): BuildRegistry {
  const now = options.now ?? Date.now;
  const history = Math.max(0, Math.floor(options.history));
  const running = new Map<string, BuildEntry>();
  /** Oldest finished first. */
  const finished: BuildEntry[] = [];
  const waiting = new FinishWaiters();
  const keys = new MemoryKeys();
  const get = async (id: string) => {
    const entry = running.get(id) ?? finished.find((e) => e.id === id);
    return entry === undefined ? undefined : toRecord(entry, now());
  };

  // The methods take their parameter types from BuildRegistry (types.ts).
  return {
    async start(build) {
      const entry = newBuildEntry(build, now());
      running.set(entry.id, entry);
      return entry.id;
    },

    update: async (id, update) => applyUpdate(running.get(id), update),
    adopt: async (id) => adoptQueued(running.get(id)),

    async addWaiters(id, delta) {
      const entry = running.get(id);
      if (entry !== undefined) entry.waiters = Math.max(0, entry.waiters + delta);
    },

    async finish(id, outcome) {
      const entry = running.get(id);
      if (entry === undefined) return;
      running.delete(id);
      finished.push(finishedEntry(entry, outcome));
      for (const gone of finished.splice(0, Math.max(0, finished.length - history))) keys.dropped(gone);
      waiting.finished(id);
    },

    get,
    waitFinished: (id, ms, signal) => finishedWithin(get, id, ms, signal, waiting.watch(id)),

    reserveKey: (key, digest) => keys.reserve(key, digest, get),
    bindKey: async (key, buildId) => keys.bind(key, buildId),
    releaseKey: async (key) => keys.release(key),
    // One instance: every build it runs is cancelled by the worker that runs it.
    requestCancel: async () => undefined,
    onCancel: () => undefined,
    onLost: () => undefined,

    async list(filter = {}) {
      const at = now();
      return [...running.values(), ...finished]
        .filter((entry) => matchesFilter(entry, filter))
        .sort((a, b) => b.startedAtMs - a.startedAtMs)
        .map((entry) => toRecord(entry, at));
    },
  };
}
