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
import { GIT_OBJECT_ID_PATTERN } from '../../src/rules/text-patterns.js';

const LS_REMOTE_TIMEOUT_SECONDS = 30;
const OBJECT_ID = new RegExp(GIT_OBJECT_ID_PATTERN);

/** The `[object id, ref]` pairs of `git ls-remote` output lines (pure). */
export function parseLsRemote(output: string): Array<[id: string, ref: string]> {
  return output
    .split('\n')
    .map((line): [string, string] => {
      const [id = '', ref = ''] = line.trim().split('\t');
      return [id, ref];
    })
    .filter(([id]) => OBJECT_ID.test(id));
}

/** One `git ls-remote <args> -- <url> <refs>` in a request directory of its own: its listing. */
async function lsRemote(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
  command: { readonly options: readonly string[]; readonly refs: readonly string[] },
): Promise<Array<[id: string, ref: string]>> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const listed = await run(
      'git',
      ['ls-remote', ...command.options, '--', plan.url.cloneUrl, ...command.refs],
      {
        baseEnv: await requestGitEnv(plan, deps.config, dir),
        signal,
        groups: deps.groups,
        secrets: gitSecrets(plan),
        timeoutSeconds: LS_REMOTE_TIMEOUT_SECONDS,
        captureStdout: true,
      },
    );
    return parseLsRemote(listed.stdout);
  } finally {
    await removeRequestDir(dir);
  }
}

export async function remoteTip(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<string[]> {
  const refs =
    plan.branch === undefined
      ? ['HEAD']
      : [`refs/heads/${plan.branch}`, `refs/tags/${plan.branch}`, `refs/tags/${plan.branch}^{}`];
  return (await lsRemote(plan, deps, signal, { options: [], refs })).map(([id]) => id);
}

/** Every branch of the repository and its head (`git ls-remote --heads`), for the prebuilds' reconcile. */
export async function remoteHeads(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const heads = new Map<string, string>();
  for (const [id, ref] of await lsRemote(plan, deps, signal, { options: ['--heads'], refs: [] }))
    if (ref.startsWith('refs/heads/')) heads.set(ref.slice('refs/heads/'.length), id);
  return heads;
}

/**
 * The commit a clone of the plan's branch would check out now (one `git ls-remote`): the branch's
 * head, else the tag's commit (peeled), else undefined (no such ref, or an unpeeled tag object).
 */
export async function remoteHead(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<string | undefined> {
  const refs =
    plan.branch === undefined
      ? ['HEAD']
      : [`refs/heads/${plan.branch}`, `refs/tags/${plan.branch}`, `refs/tags/${plan.branch}^{}`];
  const listed = new Map(
    (await lsRemote(plan, deps, signal, { options: [], refs })).map(([id, ref]) => [ref, id]),
  );
  if (plan.branch === undefined) return listed.get('HEAD');
  const head = listed.get(`refs/heads/${plan.branch}`);
  if (head !== undefined) return head;
  // An annotated tag lists its tag object and, peeled, its commit; a lightweight tag its commit only.
  return listed.get(`refs/tags/${plan.branch}^{}`) ?? listed.get(`refs/tags/${plan.branch}`);
}
