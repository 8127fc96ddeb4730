/**
 * The commit of each configured branch's newest image (its revision label), kept by the replica
 * that runs the passes (the reconcile and the refresh share one). A pass reads the branch tag's
 * manifest (one registry request) and the image's config behind it only when that manifest moved,
 * so a pass over thousands of branches whose images did not change costs one request per branch.
 * O(configured branches) entries.
 */
import type { PrebuildConfiguration } from '../../src/config/types.js';
import type { RegistryAccess } from '../../src/registry/call.js';
import { branchImage } from './branch-tag.js';

interface Known {
  readonly digest: string;
  readonly commit: string | undefined;
}

export class BranchImageCommits {
  readonly #access: () => RegistryAccess;
  /** By branch key (src/prebuilds/names.ts): the branch tag's manifest digest and its image's commit. */
  readonly #known = new Map<string, Known>();

  constructor(access: () => RegistryAccess) {
    this.#access = access;
  }

  /** The commit of the branch's newest image; undefined when it has none yet (or no revision label). */
  async of(key: string, configuration: PrebuildConfiguration, branch: string): Promise<string | undefined> {
    const image = await branchImage(this.#access(), configuration, branch);
    if (image === undefined) {
      this.#known.delete(key);
      return undefined;
    }
    const known = this.#known.get(key);
    if (known?.digest === image.digest) return known.commit;
    const commit = await image.commit();
    this.#known.set(key, { digest: image.digest, commit });
    return commit;
  }
}
