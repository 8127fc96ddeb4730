/**
 * The paths a push changed, from the trees of its two commits (never the payload's commit list,
 * which forges cut short): one shallow, blob-less fetch of both commits into a bare repository of
 * a request directory of its own, then `git diff-tree`. Undefined when the old commit cannot be
 * fetched (a force push past it): the caller then builds.
 */
import type { StepDeps } from '../common/step-deps.js';
import { openBareRepository } from '../git/bare-repository.js';
import type { BuildPlan } from '../plan/plan-types.js';

export async function changedPaths(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  commits: { readonly before: string; readonly after: string },
  signal: AbortSignal,
): Promise<string[] | undefined> {
  const repository = await openBareRepository(plan, deps, signal);
  try {
    const { before, after } = commits;
    try {
      const fetch = ['fetch', '-q', '--no-tags', '--depth=1', '--filter=blob:none'];
      await repository.git([...fetch, '--', plan.url.cloneUrl, before, after]);
    } catch {
      return undefined;
    }
    const diff = await repository.git(
      ['diff-tree', '-r', '--name-only', '--no-commit-id', '-z', before, after],
      'stdout',
    );
    return diff.stdout.split('\0').filter((path) => path.length > 0);
  } finally {
    await repository.close();
  }
}
