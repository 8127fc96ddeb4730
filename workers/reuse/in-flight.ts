/**
 * Builds in flight, findable by key (a request identity, a build key), so that identical requests
 * follow one build instead of starting another (docs/reuse.md, Following); `createInProcessInFlight`
 * keeps the map in this process. Every request answered by a build is one waiter of it (its owner
 * too); when the last leaves before the build settles, the build's signal is aborted. A settled build
 * leaves the map under all its keys.
 */
import { Cancellation } from '../../src/exec/cancellation.js';

interface Waiter {
  /** This waiter no longer wants the answer (idempotent); `reason` aborts the build if it was the last. */
  leave(reason?: unknown): void;
}

export interface InFlightBuild<T> {
  /** The commit being built: known after the clone; undefined when the build ended before. */
  readonly commit: Promise<string | undefined>;
  /** The build's record id (GET /builds/{id}) once recorded; undefined when it ended before. */
  readonly buildId: Promise<string | undefined>;
  /** The build's outcome. */
  readonly result: Promise<T>;
  /**
   * One more waiter; undefined when the build was abandoned (every waiter gone). A build that
   * has settled still takes waiters: its result is there to read.
   */
  follow(): Waiter | undefined;
}

export interface OwnedBuild<T> extends InFlightBuild<T> {
  /** Aborted when the last waiter has left. */
  readonly signal: AbortSignal;
  /** The owner's own waiter. */
  readonly waiter: Waiter;
  setCommit(commit: string): void;
  setBuildId(id: string | undefined): void;
  /** Stops the build whatever its waiters (DELETE /builds/{id}): its signal aborts with `reason`. */
  cancel(reason: unknown): void;
  /** Makes the build findable under one more key too; false when that key is taken. */
  alias(key: string): boolean;
  settle(outcome: { ok: true; value: T } | { ok: false; error: unknown }): void;
}

export interface InFlightBuilds<T> {
  find(key: string): InFlightBuild<T> | undefined;
  /** A new build under `key`, with its owner as first waiter; undefined when `key` is taken. */
  start(key: string): OwnedBuild<T> | undefined;
  /** Builds in flight (for tests and gauges). */
  readonly size: number;
}

/** The in-process map: each build under all its keys, and each build once (for `size`). */
class InProcessMap<T> implements InFlightBuilds<T> {
  readonly #byKey = new Map<string, InProcessBuild<T>>();
  readonly #builds = new Set<InProcessBuild<T>>();

  find(key: string): InFlightBuild<T> | undefined {
    return this.#byKey.get(key);
  }

  start(key: string): OwnedBuild<T> | undefined {
    if (this.#byKey.has(key)) return undefined;
    const build = new InProcessBuild<T>(key, this);
    this.#byKey.set(key, build);
    this.#builds.add(build);
    return build;
  }

  get size(): number {
    return this.#builds.size;
  }

  /** Files `build` under one more key; false when that key is taken. */
  add(key: string, build: InProcessBuild<T>): boolean {
    if (this.#byKey.has(key)) return false;
    this.#byKey.set(key, build);
    return true;
  }

  /** Removes `build` from the map under `keys` (those still its own). */
  forget(build: InProcessBuild<T>, keys: Iterable<string>): void {
    for (const k of keys) if (this.#byKey.get(k) === build) this.#byKey.delete(k);
    this.#builds.delete(build);
  }
}

/**
 * One build of the map. Its states: `running` (takes waiters and keys); `abandoned` (its last
 * waiter left: out of the map, its signal aborted, no new waiter); `settled` (out of the map, its
 * result there to read: every later waiter is answered at once).
 */
type BuildState = 'running' | 'abandoned' | 'settled';

class InProcessBuild<T> implements OwnedBuild<T> {
  readonly commit: Promise<string | undefined>;
  readonly buildId: Promise<string | undefined>;
  readonly result: Promise<T>;
  readonly waiter: Waiter;
  #state: BuildState = 'running';
  #waiters = 0;
  readonly #keys: Set<string>;
  readonly #map: InProcessMap<T>;
  readonly #controller = new AbortController();
  #resolveCommit: (commit: string | undefined) => void = () => undefined;
  #resolveBuildId: (id: string | undefined) => void = () => undefined;
  #resolveResult: (value: T) => void = () => undefined;
  #rejectResult: (error: unknown) => void = () => undefined;

  constructor(key: string, map: InProcessMap<T>) {
    this.#keys = new Set([key]);
    this.#map = map;
    this.commit = new Promise<string | undefined>((r) => (this.#resolveCommit = r));
    this.buildId = new Promise<string | undefined>((r) => (this.#resolveBuildId = r));
    this.result = new Promise<T>((res, rej) => {
      this.#resolveResult = res;
      this.#rejectResult = rej;
    });
    // A build nobody else awaits must not surface as an unhandled rejection.
    this.result.catch(() => undefined);
    this.waiter = this.follow() ?? { leave: () => undefined };
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  follow(): Waiter | undefined {
    if (this.#state === 'settled') return { leave: () => undefined };
    if (this.#state === 'abandoned') return undefined;
    this.#waiters += 1;
    let left = false;
    return {
      leave: (reason?: unknown) => {
        if (left) return;
        left = true;
        this.#leave(reason);
      },
    };
  }

  setCommit(commit: string): void {
    this.#resolveCommit(commit);
  }

  setBuildId(id: string | undefined): void {
    this.#resolveBuildId(id);
  }

  cancel(reason: unknown): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  alias(key: string): boolean {
    if (this.#state === 'settled' || !this.#map.add(key, this)) return false;
    this.#keys.add(key);
    return true;
  }

  settle(outcome: { ok: true; value: T } | { ok: false; error: unknown }): void {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    this.#map.forget(this, this.#keys);
    this.#resolveCommit(undefined);
    this.#resolveBuildId(undefined);
    if (outcome.ok) this.#resolveResult(outcome.value);
    else this.#rejectResult(outcome.error);
  }

  /** One waiter left: the last one abandons a running build. */
  #leave(reason: unknown): void {
    this.#waiters -= 1;
    if (this.#waiters > 0 || this.#state !== 'running') return;
    this.#state = 'abandoned';
    this.#map.forget(this, this.#keys);
    this.#controller.abort(reason ?? new Cancellation('client_gone'));
  }
}

export function createInProcessInFlight<T>(): InFlightBuilds<T> {
  return new InProcessMap<T>();
}
