/**
 * Reconcile (docs/prebuilds.md): each configured repository's heads read with one `git ls-remote`;
 * a configured branch whose head differs from the commit of its newest image is considered, under
 * the same paths filter (the changed paths between the two commits); a branch with no image yet
 * builds. A head already decided by an earlier pass is not decided again, unless its prebuild
 * could not start (then the next pass decides it again: nothing is skipped).
 */
import type { Logger } from '../../src/observability/logger.js';
import { matchesAny } from '../../src/rules/globs.js';
import { remoteHeads } from '../git/ls-remote.js';
import { branchImageCommit } from './branch-tag.js';
import { eachBounded } from './pass-pool.js';
import { prebuildPlan } from './plan.js';
import type { PrebuildDeps } from './ports.js';
import type { Prebuilds } from './prebuilds.js';
import { branchKey } from '../../src/prebuilds/names.js';

const LS_REMOTE_DEADLINE_MS = 60_000;

export class Reconciler {
  readonly #prebuilds: Prebuilds;
  readonly #deps: Pick<PrebuildDeps, 'config' | 'groups'>;
  /** The head each branch had at the last pass that decided on it. */
  readonly #decided = new Map<string, string>();

  constructor(prebuilds: Prebuilds, deps: Pick<PrebuildDeps, 'config' | 'groups'>) {
    this.#prebuilds = prebuilds;
    this.#deps = deps;
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
    const plan = prebuildPlan(configuration, undefined, this.#deps.config);
    const heads = await remoteHeads(plan, this.#deps, AbortSignal.timeout(LS_REMOTE_DEADLINE_MS));
    for (const [branch, head] of heads) {
      if (!matchesAny(branch, configuration.branches)) continue;
      const seen = branchKey(index, branch);
      if (this.#decided.get(seen) === head) continue;
      const newest = await branchImageCommit(this.#prebuilds.tagAccess, configuration, branch);
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
