/**
 * Refresh (docs/prebuilds.md): for each configured branch's newest image, the digests of its base
 * images and OCI features are resolved again and compared with those it was built from (read when
 * its prebuild succeeded, or at the first pass that saw it). When any changed, that head rebuilds
 * and the log names each change: `base image <ref>: <old> -> <new>`.
 */
import type { Logger } from '../../src/observability/logger.js';
import type { BranchImageCommits } from './branch-commits.js';
import type { BranchListing } from './branch-listing.js';
import { prebuildPlan } from './plan.js';
import type { PrebuildDeps } from './ports.js';
import type { Prebuilds } from './prebuilds.js';
import {
  changedReferences,
  digestsAgain,
  type PassResolutions,
  referenceDigests,
  type ReferenceDigests,
} from './reference-digests.js';
import { eachBounded } from './pass-pool.js';
import { branchKey } from '../../src/prebuilds/names.js';

interface Baseline {
  readonly commit: string;
  readonly digests: ReferenceDigests;
}

export class Refresher {
  readonly #prebuilds: Prebuilds;
  readonly #deps: Pick<PrebuildDeps, 'config' | 'groups' | 'registry' | 'logger'>;
  readonly #listing: BranchListing;
  readonly #commits: BranchImageCommits;
  readonly #baselines = new Map<string, Baseline>();

  constructor(
    prebuilds: Prebuilds,
    listing: BranchListing,
    commits: BranchImageCommits,
    deps: Pick<PrebuildDeps, 'config' | 'groups' | 'registry' | 'logger'>,
  ) {
    this.#prebuilds = prebuilds;
    this.#listing = listing;
    this.#commits = commits;
    this.#deps = deps;
    prebuilds.onSucceeded((index, branch, commit) => this.#record(index, branch, commit));
  }

  /**
   * The digests of the commit's references now: read from its files the first time, then (the
   * same commit as `before`) the same references resolved again, with no git.
   */
  async #digests(
    index: number,
    branch: string,
    commit: string,
    resolutions: PassResolutions,
    before?: Baseline,
  ): Promise<ReferenceDigests | undefined> {
    const configuration = this.#prebuilds.configurations[index];
    if (configuration === undefined) return undefined;
    const plan = prebuildPlan(configuration, branch, this.#deps.config);
    const deps = { ...this.#deps, client: this.#deps.registry };
    const read =
      before?.commit === commit
        ? await digestsAgain(plan, deps, before.digests, resolutions)
        : await referenceDigests(plan, deps, commit);
    if ('unreadable' in read) {
      this.#deps.logger.info(
        { repository: configuration.repository, branch, reason: read.unreadable },
        'refresh: digests not read',
      );
      return undefined;
    }
    return read;
  }

  /** After a successful prebuild: the digests it was built from. */
  async #record(index: number, branch: string, commit: string): Promise<void> {
    const digests = await this.#digests(index, branch, commit, new Map());
    if (digests !== undefined) this.#baselines.set(branchKey(index, branch), { commit, digests });
  }

  /**
   * One pass over every configuration, PASS_CONCURRENCY repositories at a time: O(configured
   * branches) registry reads (the branch tag's manifest each), and one per distinct reference.
   */
  async pass(logger: Logger): Promise<void> {
    const { configurations } = this.#prebuilds;
    const resolutions: PassResolutions = new Map();
    // A few repositories at a time (pass-pool.ts): a storm's reads neither flood nor time out.
    await eachBounded(configurations.length, async (index) => {
      const configuration = configurations[index];
      if (configuration?.refreshOnBaseChange !== true) return;
      await this.#configuration(index, resolutions, logger).catch((err: unknown) =>
        logger.warn(
          { err, repository: configuration.repository },
          'refresh: repository not read; read again at the next pass',
        ),
      );
    });
  }

  async #configuration(index: number, resolutions: PassResolutions, logger: Logger): Promise<void> {
    const configuration = this.#prebuilds.configurations[index];
    if (configuration === undefined) return;
    // The branches the reconcile read last, when younger than its interval (branch-listing.ts).
    for (const branch of (await this.#listing.recent(index)).keys()) {
      const commit = await this.#commits.of(branchKey(index, branch), configuration, branch);
      if (commit !== undefined) await this.#branch(index, branch, commit, resolutions, logger);
    }
  }

  async #branch(
    index: number,
    branch: string,
    commit: string,
    resolutions: PassResolutions,
    logger: Logger,
  ): Promise<void> {
    const key = branchKey(index, branch);
    const baseline = this.#baselines.get(key);
    const now = await this.#digests(index, branch, commit, resolutions, baseline);
    if (now === undefined) return;
    if (baseline === undefined || baseline.commit !== commit) {
      this.#baselines.set(key, { commit, digests: now });
      return;
    }
    const changes = changedReferences(baseline.digests, now);
    if (changes.length === 0) return;
    const repository = this.#prebuilds.configurations[index]?.repository;
    for (const change of changes) logger.info({ repository, branch, commit, change }, `refresh: ${change}`);
    const what = changes.some((c) => c.startsWith('base image')) ? 'base image changed' : 'feature changed';
    // The new digests stand from now on: a failed rebuild is not retried every pass; one that
    // could not start (the queue of prebuilds full, the store away) is, at the next pass.
    this.#baselines.set(key, { commit, digests: now });
    const delivery = await this.#prebuilds.consider(
      {
        index,
        branch,
        after: commit,
        trigger: 'refresh',
        builtReason: (id) => `refresh: ${what} (built ${id}): ${changes.join('; ')}`,
      },
      logger,
    );
    if (delivery.decision === 'failed') this.#baselines.set(key, baseline);
  }
}
