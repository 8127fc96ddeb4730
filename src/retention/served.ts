/**
 * Where retention learns what was served lately (docs/retention.md): the digests and tags answered
 * by POST /build, read through GET /image and GET /devcontainer, or reused from, and the registry
 * repositories builds were answered for. Embedded mode keeps the served times in memory (forgotten
 * on restart: an image then counts as served at its build time) and the list of repositories in a
 * file of the scratch space, read at start-up, so that a restarted instance plans the same images;
 * Redis mode shares both (redis-served.ts).
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageTarget } from '../rules/image-target.js';

/** A registry repository as builds name it: the registry (with its namespace path) and the name. */
export type Repository = Pick<ImageTarget, 'registry' | 'name' | 'repository'>;

export interface ServedStore {
  /** Records `refs` (`sha256:...` digests, `servedTag`s) of `repository` as served now. */
  mark(repository: Repository, refs: readonly string[]): Promise<void>;
  /** When each ref of `repository` (`<registry>/<name>`) was last served (ms). */
  servedTimes(repository: string): Promise<Map<string, number>>;
  /** Every repository marked so far, as it was named when marked. */
  repositories(): Promise<Repository[]>;
  /** Runs `work` unless a run holds the lock (on this or another replica): false then. */
  exclusive(work: () => Promise<void>): Promise<boolean>;
}

/** Refs kept per repository in memory (the oldest are forgotten first: forgetting never deletes). */
const MAX_REFS = 10_000;
const MAX_REPOSITORIES = 10_000;
/** The embedded list of repositories in the scratch space: one JSON string per line, appended. */
export const REPOSITORIES_FILE = 'retention-repositories.jsonl';
/** Longer lines are not a repository this service wrote (a registry host and a name). */
const MAX_REPOSITORY_LENGTH = 1024;

/**
 * How a repository is listed (the file's lines, the Redis set): `<registry>/<name>` when the registry
 * has no namespace path (read back at its first `/`), else `["<registry>","<name>"]`, so that a
 * namespace path stays with the registry.
 */
export const repositoryEntry = (repository: Repository): string =>
  repository.registry.includes('/')
    ? JSON.stringify([repository.registry, repository.name])
    : repository.repository;

/**
 * The repository of a listed entry, or of a `<registry>/<name>` the settings give (the registry is
 * its host: a namespace path reads as part of the name, the same repository to the registry).
 */
export function repositoryOfEntry(entry: string): ImageTarget {
  if (entry.startsWith('["')) {
    try {
      const value: unknown = JSON.parse(entry);
      if (Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string'))
        return new ImageTarget(value[0] as string, value[1] as string);
    } catch {
      // not a listed pair: read as text below
    }
  }
  const slash = entry.indexOf('/');
  return slash < 0
    ? new ImageTarget(entry, '')
    : new ImageTarget(entry.slice(0, slash), entry.slice(slash + 1));
}

/** The repository entries of the file's lines, in order, once each; a line cut short by a crash is skipped. */
export function repositoriesOfFile(text: string): string[] {
  const found = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'string' && value !== '' && value.length <= MAX_REPOSITORY_LENGTH)
        found.add(value);
    } catch {
      // a partial line (the process ended while writing it): its repository is written again when marked
    }
  }
  return [...found];
}

export interface MemoryServedOptions {
  /** The scratch space: the list of repositories is kept there (REPOSITORIES_FILE); else in memory only. */
  readonly scratchDir?: string;
}

export class MemoryServedStore implements ServedStore {
  /** The listed repositories (repositoryEntry), in the order they were first marked. */
  readonly #entries = new Set<string>();
  /** The served times by `<registry>/<name>`. */
  readonly #served = new Map<string, Map<string, number>>();
  readonly #file: string | undefined;
  #loaded: Promise<void> | undefined;
  #running = false;

  constructor(options: MemoryServedOptions = {}) {
    this.#file = options.scratchDir === undefined ? undefined : join(options.scratchDir, REPOSITORIES_FILE);
  }

  /** The repositories the file names, once per process; a failed read is tried again next time. */
  #load(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return Promise.resolve();
    this.#loaded ??= (async () => {
      let text = '';
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      for (const entry of repositoriesOfFile(text)) {
        if (this.#entries.size >= MAX_REPOSITORIES) break;
        this.#entries.add(entry);
      }
    })().catch((err: unknown) => {
      this.#loaded = undefined;
      throw err;
    });
    return this.#loaded;
  }

  async mark(repository: Repository, refs: readonly string[]): Promise<void> {
    await this.#load();
    const entry = repositoryEntry(repository);
    if (!this.#entries.has(entry)) {
      if (this.#entries.size >= MAX_REPOSITORIES) return;
      // Written before it is listed: a repository a plan names survives a restart (two marks of a
      // new repository at once may both write it; it is read back once).
      if (this.#file !== undefined && entry.length <= MAX_REPOSITORY_LENGTH)
        await appendFile(this.#file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
      this.#entries.add(entry);
    }
    const times = this.#served.get(repository.repository) ?? new Map<string, number>();
    this.#served.set(repository.repository, times);
    const now = Date.now();
    for (const ref of refs) {
      times.delete(ref);
      times.set(ref, now);
      if (times.size > MAX_REFS) times.delete(times.keys().next().value as string);
    }
  }

  async servedTimes(repository: string): Promise<Map<string, number>> {
    await this.#load();
    return new Map(this.#served.get(repository) ?? []);
  }

  async repositories(): Promise<Repository[]> {
    await this.#load();
    return [...this.#entries].map(repositoryOfEntry);
  }

  async exclusive(work: () => Promise<void>): Promise<boolean> {
    if (this.#running) return false;
    this.#running = true;
    try {
      await work();
      return true;
    } finally {
      this.#running = false;
    }
  }
}
