/**
 * The embedded build registry: this instance's running builds and its newest `history` finished
 * ones, in memory (they do not survive the process, like command logs). Created at start-up.
 */
import { randomUUID } from 'node:crypto';
import type {
  BuildFilter,
  BuildOutcome,
  BuildRecord,
  BuildRegistry,
  BuildUpdate,
  NewBuild,
  RunningPhase,
} from './types.js';

interface Entry {
  readonly id: string;
  readonly requestId: string;
  readonly repository: string;
  readonly startedAtMs: number;
  branch?: string;
  commit?: string;
  image: string;
  phase: RunningPhase | 'finished';
  gitCloneLogId?: string;
  imageBuildLogId?: string;
  waiters: number;
  outcome?: BuildOutcome;
}

export interface MemoryRegistryOptions {
  /** Finished builds kept (the newest). */
  readonly history: number;
  /** Milliseconds since the epoch (tests pass a fake clock). */
  readonly now?: () => number;
}

const seconds = (ms: number): number => Math.round(ms) / 1000;

function matches(entry: Entry, filter: BuildFilter): boolean {
  if (filter.requestId !== undefined && entry.requestId !== filter.requestId) return false;
  if (filter.repository !== undefined && entry.repository !== filter.repository) return false;
  if (filter.status === undefined) return true;
  return filter.status === 'running' ? entry.outcome === undefined : entry.outcome?.status === filter.status;
}

export function createMemoryBuildRegistry(options: MemoryRegistryOptions): BuildRegistry {
  const now = options.now ?? Date.now;
  const history = Math.max(0, Math.floor(options.history));
  const running = new Map<string, Entry>();
  /** Oldest finished first. */
  const finished: Entry[] = [];

  function record(entry: Entry, at: number): BuildRecord {
    const outcome = entry.outcome;
    return {
      id: entry.id,
      requestId: entry.requestId,
      repository: entry.repository,
      ...(entry.branch === undefined ? {} : { branch: entry.branch }),
      ...(entry.commit === undefined ? {} : { commit: entry.commit }),
      image: entry.image,
      phase: entry.phase,
      startedAt: new Date(entry.startedAtMs).toISOString(),
      elapsedSeconds:
        outcome === undefined ? seconds(Math.max(0, at - entry.startedAtMs)) : outcome.durationSeconds,
      ...(entry.gitCloneLogId === undefined ? {} : { gitCloneLogId: entry.gitCloneLogId }),
      ...(entry.imageBuildLogId === undefined ? {} : { imageBuildLogId: entry.imageBuildLogId }),
      waiters: entry.waiters,
      ...(outcome === undefined
        ? {}
        : {
            status: outcome.status,
            durationSeconds: outcome.durationSeconds,
            ...(outcome.error === undefined ? {} : { error: outcome.error }),
          }),
    };
  }

  return {
    async start(build: NewBuild) {
      const id = `bld-${randomUUID()}`;
      running.set(id, {
        id,
        requestId: build.requestId,
        repository: build.repository,
        startedAtMs: now(),
        ...(build.branch === undefined ? {} : { branch: build.branch }),
        image: build.image,
        phase: 'cloning',
        waiters: 1,
      });
      return id;
    },

    async update(id: string, update: BuildUpdate) {
      const entry = running.get(id);
      if (entry === undefined) return;
      if (update.phase !== undefined) entry.phase = update.phase;
      if (update.branch !== undefined) entry.branch = update.branch;
      if (update.commit !== undefined) entry.commit = update.commit;
      if (update.image !== undefined) entry.image = update.image;
      if (update.gitCloneLogId !== undefined) entry.gitCloneLogId = update.gitCloneLogId;
      if (update.imageBuildLogId !== undefined) entry.imageBuildLogId = update.imageBuildLogId;
    },

    async addWaiters(id: string, delta: number) {
      const entry = running.get(id);
      if (entry !== undefined) entry.waiters = Math.max(0, entry.waiters + delta);
    },

    async finish(id: string, outcome: BuildOutcome) {
      const entry = running.get(id);
      if (entry === undefined) return;
      running.delete(id);
      entry.phase = 'finished';
      entry.outcome = outcome;
      if (outcome.image !== undefined) entry.image = outcome.image;
      finished.push(entry);
      finished.splice(0, Math.max(0, finished.length - history));
    },

    async list(filter: BuildFilter = {}) {
      const at = now();
      return [...running.values(), ...finished]
        .filter((entry) => matches(entry, filter))
        .sort((a, b) => b.startedAtMs - a.startedAtMs)
        .map((entry) => record(entry, at));
    },
  };
}
