/**
 * The files of one commit, read on demand: a shallow, blob-less fetch of the commit into a bare
 * repository of a request directory of its own, each file's blob fetched when read. For the
 * refresh, which reads only the definition and its Dockerfile. Closed (removed) by the caller.
 */
import { run } from '../../src/exec/run.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import type { StepDeps } from '../common/step-deps.js';
import { gitSecrets, requestGitEnv } from '../git/request-git-env.js';
import type { BuildPlan } from '../plan/plan-types.js';

const GIT_TIMEOUT_SECONDS = 60;

export interface CommitFiles {
  /** The file's bytes at the commit; undefined when it has none there. */
  read(path: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

export async function openCommitFiles(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  commit: string,
  signal: AbortSignal,
): Promise<CommitFiles> {
  const dir = await createRequestDir(deps.config.scratchDir);
  const options = {
    baseEnv: await requestGitEnv(plan, deps.config, dir),
    signal,
    groups: deps.groups,
    secrets: gitSecrets(plan),
    timeoutSeconds: GIT_TIMEOUT_SECONDS,
  };
  const git = (...args: string[]) => run('git', ['-C', dir.clone, ...args], options);
  try {
    await run('git', ['init', '-q', '--bare', dir.clone], options);
    await git('remote', 'add', 'origin', plan.url.cloneUrl);
    await git('fetch', '-q', '--no-tags', '--depth=1', '--filter=blob:none', 'origin', commit);
  } catch (err) {
    await removeRequestDir(dir);
    throw err;
  }
  return {
    read: async (path) => {
      try {
        const shown = await run('git', ['-C', dir.clone, 'cat-file', 'blob', `${commit}:${path}`], {
          ...options,
          captureStdout: true,
        });
        return Buffer.from(shown.stdout, 'utf8');
      } catch {
        return undefined;
      }
    },
    close: () => removeRequestDir(dir),
  };
}
