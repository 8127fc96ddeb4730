/**
 * Reconcile (docs/prebuilds.md): each configured repository's heads read with one `git ls-remote`;
 * a configured branch whose head differs from the commit of its newest image is considered, under
 * the same paths filter (the changed paths between the two commits); a branch with no image yet
 * builds. A head already decided by an earlier pass is not decided again, unless its prebuild
 * could not start (then the next pass decides it again: nothing is skipped).
 */
import type { Logger } from '../../src/observability/logger.js';
import type { BranchImageCommits } from './branch-commits.js';
import type { BranchListing } from './branch-listing.js';
import { eachBounded } from './pass-pool.js';
import type { Prebuilds } from './prebuilds.js';
import { branchKey } from '../../src/prebuilds/names.js';

export class Reconciler {
  readonly #prebuilds: Prebuilds;
  readonly #listing: BranchListing;
  readonly #commits: BranchImageCommits;
  /** The head each branch had at the last pass that decided on it. */
  readonly #decided = new Map<string, string>();

  constructor(prebuilds: Prebuilds, listing: BranchListing, commits: BranchImageCommits) {
    this.#prebuilds = prebuilds;
    this.#listing = listing;
    this.#commits = commits;
  }

  /**
   * One pass over every configuration, PASS_CONCURRENCY repositories at a time; a repository that
   * cannot be read is logged and read again at the next pass. O(configurations) reads.
   */
  async pass(logger: Logger): Promise<void> {
    const { configurations } = this.#prebuilds;
    // A few repositories at a time (pass-pool.ts): a storm's reads neither flood nor time out.
    await eachBounded(configurations.length, (index) =>
      this.#configuration(index, logger).catch((err: unknown) =>
        logger.warn(
          { err, repository: configurations[index]?.repository },
          'reconcile: repository not read; read again at the next pass',
        ),
      ),
    );
  }

  async #configuration(index: number, logger: Logger): Promise<void> {
    const configuration = this.#prebuilds.configurations[index];
    if (configuration === undefined) return;
    for (const [branch, head] of await this.#listing.fresh(index)) {
      const seen = branchKey(index, branch);
      if (this.#decided.get(seen) === head) continue;
      const newest = await this.#commits.of(seen, configuration, branch);
      this.#decided.set(seen, head);
      if (newest === head) continue;
      const delivery = await this.#prebuilds.consider(
        {
          index,
          branch,
          ...(newest === undefined ? {} : { before: newest }),
          after: head,
          trigger: 'reconcile',
        },
        logger,
      );
      // Not started (the queue of prebuilds full, the store away): decided again at the next pass.
      if (delivery.decision === 'failed') this.#decided.delete(seen);
    }
  }
}
