/**
 * Builds in flight, findable by key (a request identity, a build key), so that identical
 * requests join one build instead of starting another. The interface is what the router and
 * the job use; `createInProcessInFlight` keeps the map in this process (a shared store can
 * implement the same interface for several instances).
 *
 * Waiters: every request answered by a build is one waiter of it (its leader included); when
 * the last waiter leaves (its client went away) before the build settles, the build's signal
 * is aborted. A settled build leaves the map under all its keys.
 */
import { Cancellation } from '../../src/exec/cancellation.js';

export interface Waiter {
  /** This waiter no longer wants the answer (idempotent); `reason` aborts the build if it was the last. */
  leave(reason?: unknown): void;
}

export interface InFlightBuild<T> {
  /** The commit being built: known after the clone; undefined when the build ended before. */
  readonly commit: Promise<string | undefined>;
  /** The build's outcome. */
  readonly result: Promise<T>;
  /**
   * One more waiter; undefined when the build was abandoned (every waiter gone). A build that
   * has settled still takes waiters: its result is there to read.
   */
  join(): Waiter | undefined;
}

export interface LeadBuild<T> extends InFlightBuild<T> {
  /** Aborted when the last waiter has left. */
  readonly signal: AbortSignal;
  /** The leader's own waiter. */
  readonly waiter: Waiter;
  setCommit(commit: string): void;
  /** Makes the build findable under one more key too; false when that key is taken. */
  alias(key: string): boolean;
  settle(outcome: { ok: true; value: T } | { ok: false; error: unknown }): void;
}

export interface InFlightBuilds<T> {
  find(key: string): InFlightBuild<T> | undefined;
  /** A new build under `key`, with its leader as first waiter; undefined when `key` is taken. */
  start(key: string): LeadBuild<T> | undefined;
  /** Builds in flight (for tests and gauges). */
  readonly size: number;
}

export function createInProcessInFlight<T>(): InFlightBuilds<T> {
  const byKey = new Map<string, LeadBuild<T>>();
  const builds = new Set<LeadBuild<T>>();

  const start = (key: string): LeadBuild<T> | undefined => {
    if (byKey.has(key)) return undefined;
    const keys = new Set<string>([key]);
    const controller = new AbortController();
    let waiters = 0;
    let settled = false;
    let resolveCommit: (c: string | undefined) => void = () => undefined;
    const commit = new Promise<string | undefined>((r) => (resolveCommit = r));
    let resolveResult: (v: T) => void = () => undefined;
    let rejectResult: (e: unknown) => void = () => undefined;
    const result = new Promise<T>((res, rej) => {
      resolveResult = res;
      rejectResult = rej;
    });
    // A build nobody else awaits must not surface as an unhandled rejection.
    result.catch(() => undefined);

    const forget = (): void => {
      for (const k of keys) if (byKey.get(k) === build) byKey.delete(k);
      builds.delete(build);
    };
    const join = (): Waiter | undefined => {
      if (settled) return { leave: () => undefined };
      if (controller.signal.aborted) return undefined;
      waiters += 1;
      let left = false;
      return {
        leave: (reason?: unknown) => {
          if (left) return;
          left = true;
          waiters -= 1;
          if (waiters === 0 && !settled) {
            forget();
            controller.abort(reason ?? new Cancellation('client_gone'));
          }
        },
      };
    };
    const build: LeadBuild<T> = {
      commit,
      result,
      signal: controller.signal,
      get waiter() {
        return own;
      },
      join,
      setCommit: (c) => resolveCommit(c),
      alias: (k) => {
        if (settled || byKey.has(k)) return false;
        keys.add(k);
        byKey.set(k, build);
        return true;
      },
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        forget();
        resolveCommit(undefined);
        if (outcome.ok) resolveResult(outcome.value);
        else rejectResult(outcome.error);
      },
    };
    const own: Waiter = join() ?? { leave: () => undefined };
    byKey.set(key, build);
    builds.add(build);
    return build;
  };

  return {
    find: (key) => byKey.get(key),
    start,
    get size() {
      return builds.size;
    },
  };
}
