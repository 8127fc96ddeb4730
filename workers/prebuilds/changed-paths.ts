/**
 * The paths a push changed, from the trees of its two commits (never the payload's commit list,
 * which forges cut short): one shallow, blob-less fetch of both commits into a bare repository of
 * a request directory of its own, then `git diff-tree`. Undefined when the old commit cannot be
 * fetched (a force push past it): the caller then builds.
 */
import { run } from '../../src/exec/run.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import type { StepDeps } from '../common/step-deps.js';
import { gitSecrets, requestGitEnv } from '../git/request-git-env.js';
import type { BuildPlan } from '../plan/plan-types.js';

const GIT_TIMEOUT_SECONDS = 60;

export async function changedPaths(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  commits: { readonly before: string; readonly after: string },
  signal: AbortSignal,
): Promise<string[] | undefined> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const options = {
      baseEnv: await requestGitEnv(plan, deps.config, dir),
      signal,
      groups: deps.groups,
      secrets: gitSecrets(plan),
      timeoutSeconds: GIT_TIMEOUT_SECONDS,
    };
    await run('git', ['init', '-q', '--bare', dir.clone], options);
    const git = (...args: string[]) => run('git', ['-C', dir.clone, ...args], options);
    try {
      await git(
        'fetch',
        '-q',
        '--no-tags',
        '--depth=1',
        '--filter=blob:none',
        '--',
        plan.url.cloneUrl,
        commits.before,
        commits.after,
      );
    } catch {
      return undefined;
    }
    const diff = await run(
      'git',
      [
        '-C',
        dir.clone,
        'diff-tree',
        '-r',
        '--name-only',
        '--no-commit-id',
        '-z',
        commits.before,
        commits.after,
      ],
      { ...options, captureStdout: true },
    );
    return diff.stdout.split('\0').filter((path) => path.length > 0);
  } finally {
    await removeRequestDir(dir);
  }
}
