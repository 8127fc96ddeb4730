/**
 * The steps of a partial, sparse (non-cone) clone after `git clone --filter=blob:none --no-checkout`
 * (clone.ts; docs/behaviour.md, Clones): whether the server honoured the filter (storedObjects <=
 * nonBlobObjects, fetching nothing); sealClone (`git remote remove origin`: git never fetches again);
 * checkoutReadSet, the read set's patterns (sparse-patterns.ts) in one fetch, by the only commands
 * given the promisor remote in their environment; widenReadSet (`git sparse-checkout reapply`) when
 * the definition names paths outside its own folder.
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

/** Objects the clone stores (no per-object lookup). */
export async function storedObjects(git: GitCapture): Promise<number> {
  return objectsStored(await git(['count-objects', '-v']));
}

/** Commits, trees and tags the refs reach (`--missing=allow-any`: fetches nothing). */
export async function nonBlobObjects(git: GitCapture): Promise<number> {
  const count = await git([
    'rev-list',
    '--objects',
    '--missing=allow-any',
    '--filter=blob:none',
    '--count',
    '--all',
  ]);
  return Number.parseInt(count.trim(), 10);
}

/** The clone's promisor remote as `git -c` pairs (pure): what the removed `origin` held. */
export function promisorRemoteConfig(cloneUrl: string): Array<readonly [string, string]> {
  return [
    ['remote.origin.url', cloneUrl],
    ['remote.origin.promisor', 'true'],
    ['remote.origin.partialclonefilter', 'blob:none'],
  ];
}

/**
 * Checks out `readSet`, whose patterns setSparsePaths wrote (apart, so that the checkout's process
 * starts at once); `fetchingGit` carries the promisor remote (promisorRemoteConfig).
 */
export async function checkoutReadSet(fetchingGit: GitCapture, readSet: readonly ReadPath[]): Promise<void> {
  // --quiet: no report on the branch's upstream (`origin` is removed, so it would say "gone").
  if (readSet.length > 0) await fetchingGit(['checkout', '--quiet']);
}

/** Widens a checked-out clone to `readSet` (a superset of what is checked out): fetches and writes the rest. */
export async function widenReadSet(
  fetchingGit: GitCapture,
  cloneDir: string,
  readSet: readonly ReadPath[],
): Promise<void> {
  await setSparsePaths(cloneDir, readSet);
  await fetchingGit(['sparse-checkout', 'reapply']);
}

/** `.git/info/sparse-checkout` for `readSet`. */
export async function setSparsePaths(cloneDir: string, readSet: readonly ReadPath[]): Promise<void> {
  const info = join(cloneDir, '.git', 'info');
  await mkdir(info, { recursive: true });
  await writeFile(join(info, 'sparse-checkout'), sparseCheckoutFile(readSet), { mode: 0o600 });
}

export async function sealClone(git: GitCapture): Promise<void> {
  await git(['remote', 'remove', 'origin']);
}
