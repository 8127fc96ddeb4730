/**
 * Where retention learns what was served lately (docs/retention.md): the digests and tags answered
 * by POST /build, read through GET /image and GET /devcontainer, or reused from, and the registry
 * repositories builds were answered for. Embedded mode keeps them in memory (forgotten on restart:
 * an image then counts as served at its build time); Redis mode shares them (redis-served.ts).
 */

export interface ServedStore {
  /** Records `refs` (`sha256:...` digests, `tag:<tag>`) of `repository` (`<registry>/<name>`) as served now. */
  mark(repository: string, refs: readonly string[]): Promise<void>;
  /** When each ref of `repository` was last served (ms). */
  servedTimes(repository: string): Promise<Map<string, number>>;
  /** Every repository marked so far. */
  repositories(): Promise<string[]>;
  /** Runs `work` unless a run holds the lock (on this or another replica): false then. */
  exclusive(work: () => Promise<void>): Promise<boolean>;
}

/** Refs kept per repository in memory (the oldest are forgotten first: forgetting never deletes). */
const MAX_REFS = 10_000;
const MAX_REPOSITORIES = 10_000;

export class MemoryServedStore implements ServedStore {
  readonly #served = new Map<string, Map<string, number>>();
  #running = false;

  async mark(repository: string, refs: readonly string[]): Promise<void> {
    let times = this.#served.get(repository);
    if (times === undefined) {
      if (this.#served.size >= MAX_REPOSITORIES) return;
      times = new Map();
      this.#served.set(repository, times);
    }
    const now = Date.now();
    for (const ref of refs) {
      times.delete(ref);
      times.set(ref, now);
      if (times.size > MAX_REFS) times.delete(times.keys().next().value as string);
    }
    return Promise.resolve();
  }

  async servedTimes(repository: string): Promise<Map<string, number>> {
    return Promise.resolve(new Map(this.#served.get(repository) ?? []));
  }

  async repositories(): Promise<string[]> {
    return Promise.resolve([...this.#served.keys()]);
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
