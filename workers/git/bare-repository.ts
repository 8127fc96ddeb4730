/**
 * A bare repository in a request directory of its own, with git run in it through the hardened git
 * environment and the request's credentials: what the prebuilds fetch single commits into (the
 * paths a push changed, the files of one commit). Closed (removed) by the caller.
 */
import { run, type CommandResult } from '../../src/exec/run.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { gitSecrets, requestGitEnv } from './request-git-env.js';

const GIT_TIMEOUT_SECONDS = 60;

export interface BareRepository {
  /** `git -C <repository> <args>`; `capture`: its standard output is kept in the result. */
  git(args: readonly string[], capture?: 'stdout'): Promise<CommandResult>;
  close(): Promise<void>;
}

export async function openBareRepository(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<BareRepository> {
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
    return {
      git: (args, capture) =>
        run('git', ['-C', dir.clone, ...args], { ...options, captureStdout: capture === 'stdout' }),
      close: () => removeRequestDir(dir),
    };
  } catch (err) {
    await removeRequestDir(dir);
    throw err;
  }
}
