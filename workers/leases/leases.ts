/**
 * Build leases: identical builds follow one across replicas (see docs/redis.md). A build whose
 * key is known asks for the key's lease (an id: the build key in one target repository): the first
 * holds it until its build ends, then releases it with where it pushed the image; a later one
 * follows the build that holds it instead of building. Embedded mode has nobody to share with:
 * every build runs unshared (createEmbeddedLeases); Redis mode: redis-leases.ts. The answered
 * commits live beside them. Only image references leave the replica (no credential goes to Redis).
 */
import { createMemoryAnsweredCommits, type AnsweredCommits } from './answered-commits.js';
import { memoryRecentStore, type RecentStore } from './recent-store.js';

/** Where a build pushed its image: what it tells the requests that waited for it. */
export interface BuiltImage {
  readonly image: string;
  readonly registry: string;
  readonly name: string;
  readonly tag: string;
  /** The pushed digest (absent in outcomes stored by an older replica). */
  readonly digest?: string;
}

/**
 * How a followed build ended: its image, or why there is none to reuse (a log line's text).
 * `lost`: it left no outcome at all (its replica died), so one of its followers may hold the
 * lease next while the others follow it, rather than each building; a build that failed is not handed on.
 */
export type FollowedOutcome =
  | { readonly ok: true; readonly built: BuiltImage }
  | { readonly ok: false; readonly why: string; readonly lost?: true };

/** The outcome's `why` when the request stopped waiting (its client went away). */
export const STOPPED_WAITING = 'the request stopped waiting for the build with the same key';

/** A build with the same key that a request waits for instead of building (holding no slot). */
export interface FollowedBuild {
  /** Where the build runs, for the log ("in flight here", "on another replica"). */
  readonly where: 'here' | 'another replica';
  /**
   * Starts waiting: its outcome, or `{ok: false}` once `signal` aborts. Undefined when the build
   * can no longer be followed (abandoned by all its waiters).
   */
  wait(signal: AbortSignal): Promise<FollowedOutcome> | undefined;
}

export interface HeldLease {
  /** Ends the lease, telling the followers where the image is (`undefined`: the build failed). Never throws. */
  release(built: BuiltImage | undefined): Promise<void>;
}

/**
 * `unshared`: the build runs without a lease, nobody on another replica follows it (embedded
 * mode; or another replica holds the key and `follow` was false, or the key changed hands again
 * and again while asked for).
 */
export type LeaseRole =
  | { readonly kind: 'hold'; readonly lease: HeldLease }
  | { readonly kind: 'follow'; readonly build: FollowedBuild }
  | { readonly kind: 'unshared' };

export interface BuildLeases {
  /**
   * Holds the lease of `id` (this build runs), or (when `follow`) follows the build on another
   * replica that holds it; throws when the shared store is unreachable.
   */
  holdOrFollow(id: string, options: { readonly follow: boolean }): Promise<LeaseRole>;
  /** Stops renewing leases (the process is ending). */
  close(): Promise<void>;
  /** The commits answered by request shape: this instance's, or every replica's (Redis mode). */
  readonly answered: AnsweredCommits;
  /** The key inputs of each repository's last build: this instance's, or every replica's. */
  readonly recent: RecentStore;
}

/** Embedded mode: one instance, no other replica to follow; builds in flight here are found in the in-flight map. */
export function createEmbeddedLeases(): BuildLeases {
  return {
    holdOrFollow: async () => ({ kind: 'unshared' }),
    close: async () => undefined,
    answered: createMemoryAnsweredCommits(),
    recent: memoryRecentStore(),
  };
}
