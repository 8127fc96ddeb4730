/**
 * Where the requested branch (or tag, or the default branch) of the repository points now:
 * one `git ls-remote` with the request's credentials through the hardened git environment,
 * in a request directory of its own (removed at the end). Used to check that a build in flight
 * still builds the branch's tip before a request follows it. The commits listed, or [] when the
 * ref does not exist.
 */
import { run } from '../../src/exec/run.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import { gitSecrets, requestGitEnv } from './request-git-env.js';

const LS_REMOTE_TIMEOUT_SECONDS = 30;

/** The object ids of `git ls-remote` output lines (pure). */
export function parseLsRemote(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.split('\t')[0]?.trim() ?? '')
    .filter((id) => /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id));
}

export async function remoteTip(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<string[]> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const refs =
      plan.branch === undefined
        ? ['HEAD']
        : [`refs/heads/${plan.branch}`, `refs/tags/${plan.branch}`, `refs/tags/${plan.branch}^{}`];
    const listed = await run('git', ['ls-remote', '--', plan.url.cloneUrl, ...refs], {
      baseEnv: await requestGitEnv(plan, deps.config, dir),
      signal,
      groups: deps.groups,
      secrets: gitSecrets(plan),
      timeoutSeconds: LS_REMOTE_TIMEOUT_SECONDS,
      captureStdout: true,
    });
    return parseLsRemote(listed.stdout);
  } finally {
    await removeRequestDir(dir);
  }
}

/** Every branch of the repository and its head (`git ls-remote --heads`), for the prebuilds' reconcile. */
export async function remoteHeads(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const listed = await run('git', ['ls-remote', '--heads', '--', plan.url.cloneUrl], {
      baseEnv: await requestGitEnv(plan, deps.config, dir),
      signal,
      groups: deps.groups,
      secrets: gitSecrets(plan),
      timeoutSeconds: LS_REMOTE_TIMEOUT_SECONDS,
      captureStdout: true,
    });
    const heads = new Map<string, string>();
    for (const line of listed.stdout.split('\n')) {
      const [id = '', ref = ''] = line.trim().split('\t');
      if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id) && ref.startsWith('refs/heads/'))
        heads.set(ref.slice('refs/heads/'.length), id);
    }
    return heads;
  } finally {
    await removeRequestDir(dir);
  }
}
