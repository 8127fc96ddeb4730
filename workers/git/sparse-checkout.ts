/**
 * The steps of a partial clone after `git clone --filter=blob:none --no-checkout` (clone.ts):
 * - filterHonoured: did the server send file contents anyway (no filter support)? Objects
 *   stored against commits + trees + tags reached, without fetching anything;
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

/** `count: N` and `in-pack: N` of `git count-objects -v`, summed (pure). */
export function objectsStored(countObjects: string): number {
  let total = 0;
  for (const line of countObjects.split('\n')) {
    const [key, value] = line.split(':').map((part) => part.trim());
    if (key === 'count' || key === 'in-pack') total += Number.parseInt(value ?? '', 10) || 0;
  }
  return total;
}

/**
 * True when the server honoured the filter: the clone stores no more objects than the commits,
 * trees and tags its refs reach (a full clone stores every blob too). Both counts are cheap (no
 * per-blob lookup) and fetch nothing (`--missing=allow-any`).
 */
export async function filterHonoured(git: GitCapture): Promise<boolean> {
  const stored = objectsStored(await git(['count-objects', '-v']));
  const nonBlobs = await git([
    'rev-list',
    '--objects',
    '--missing=allow-any',
    '--filter=blob:none',
    '--count',
    '--all',
  ]);
  return stored <= Number.parseInt(nonBlobs.trim(), 10);
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
