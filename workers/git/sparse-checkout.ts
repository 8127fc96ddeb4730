/**
 * The steps of a partial clone after `git clone --filter=blob:none --no-checkout` (clone.ts):
 * - filterHonoured: did the server send file contents anyway (no filter support)? Counted
 *   without fetching anything (`--missing=allow-any` turns lazy fetches off);
 * - checkoutReadSet: non-cone sparse patterns of the read set (sparse-patterns.ts) written to
 *   `.git/info/sparse-checkout`, then `git checkout`, which fetches the missing blobs of exactly
 *   those paths in one request. An empty read set (the fallback definition) checks out nothing;
 *   widenReadSet: the same for a larger read set once the definition is read
 *   (`git sparse-checkout reapply`: one more request, only when the definition names paths
 *   outside its own folder);
 * - sealClone: `git remote remove origin` drops the promisor remote (`remote.origin.promisor`,
 *   its filter and URL): from then on git treats a missing object as missing and never fetches,
 *   whatever environment a later command runs with.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadPath } from '../builder/read-set.js';
import type { GitCapture } from './commit-definition.js';
import { sparseCheckoutFile } from './sparse-patterns.js';

/** True when file contents are missing (the filter was honoured); with depth 1 the count is 1 commit + present blobs. */
export async function filterHonoured(git: GitCapture, commit: string): Promise<boolean> {
  const count = await git([
    'rev-list',
    '--objects',
    '--missing=allow-any',
    '--filter=object:type=blob',
    '--count',
    commit,
  ]);
  return Number.parseInt(count.trim(), 10) <= 1;
}

export async function checkoutReadSet(
  git: GitCapture,
  cloneDir: string,
  readSet: readonly ReadPath[],
): Promise<void> {
  if (readSet.length === 0) return;
  await git(['config', 'core.sparseCheckout', 'true']);
  await git(['config', 'core.sparseCheckoutCone', 'false']);
  await writePatterns(cloneDir, readSet);
  await git(['checkout']);
}

/** Widens a checked-out clone to `readSet` (a superset of what is checked out): fetches and writes the rest. */
export async function widenReadSet(
  git: GitCapture,
  cloneDir: string,
  readSet: readonly ReadPath[],
): Promise<void> {
  await writePatterns(cloneDir, readSet);
  await git(['sparse-checkout', 'reapply']);
}

async function writePatterns(cloneDir: string, readSet: readonly ReadPath[]): Promise<void> {
  const info = join(cloneDir, '.git', 'info');
  await mkdir(info, { recursive: true });
  await writeFile(join(info, 'sparse-checkout'), sparseCheckoutFile(readSet), { mode: 0o600 });
}

export async function sealClone(git: GitCapture): Promise<void> {
  await git(['remote', 'remove', 'origin']);
}
