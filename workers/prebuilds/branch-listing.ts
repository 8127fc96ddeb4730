/**
 * The configured branches of each prebuild repository and their heads, as the last read of the
 * repository named them, kept by the replica that runs the passes. The reconcile reads every
 * time; the refresh takes a read younger than the reconcile interval, so a refresh after a
 * reconcile costs no git read at all (a storm of thousands of repositories asks only registries).
 */
import { matchesAny } from '../../src/rules/globs.js';
import { remoteHeads } from '../git/ls-remote.js';
import { prebuildPlan } from './plan.js';
import type { PrebuildDeps } from './ports.js';
import type { Prebuilds } from './prebuilds.js';

/** How long one read of a repository's heads may take before the pass leaves it for the next. */
const READ_DEADLINE_MS = 60_000;

/** A configured branch's name and head commit. */
export type Heads = ReadonlyMap<string, string>;

interface Read {
  readonly heads: Heads;
  readonly atMs: number;
}

export class BranchListing {
  readonly #read: (index: number) => Promise<Heads>;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  /** One entry per configuration index: O(configurations x configured branches). */
  readonly #last = new Map<number, Read>();

  /**
   * `read` answers the configured branches of configuration `index` now; a read is reused by
   * `recent` for `maxAgeMs` from the moment it was asked.
   */
  constructor(read: (index: number) => Promise<Heads>, maxAgeMs: number, now: () => number = Date.now) {
    this.#read = read;
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  /** The configured branches read now, kept for `recent`. */
  async fresh(index: number): Promise<Heads> {
    const atMs = this.#now();
    const heads = await this.#read(index);
    this.#last.set(index, { heads, atMs });
    return heads;
  }

  /** The last read's branches while it is younger than the age given, else a read now. */
  recent(index: number): Promise<Heads> {
    const last = this.#last.get(index);
    if (last !== undefined && this.#now() - last.atMs < this.#maxAgeMs) return Promise.resolve(last.heads);
    return this.fresh(index);
  }
}

/**
 * The service's listing: one read of the repository's heads (over http(s) one `GET info/refs` in
 * process, else `git ls-remote --heads`), kept to the branches its configuration names.
 */
export function remoteBranchListing(
  prebuilds: Prebuilds,
  deps: Pick<PrebuildDeps, 'config' | 'groups'>,
  maxAgeMs: number,
): BranchListing {
  return new BranchListing(async (index) => {
    const configuration = prebuilds.configurations[index];
    if (configuration === undefined) return new Map();
    const plan = prebuildPlan(configuration, undefined, deps.config);
    const heads = await remoteHeads(plan, deps, AbortSignal.timeout(READ_DEADLINE_MS));
    return new Map([...heads].filter(([branch]) => matchesAny(branch, configuration.branches)));
  }, maxAgeMs);
}
