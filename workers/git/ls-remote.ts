/**
 * Where the requested branch (or tag, or the default branch) of the repository points now: over
 * http(s) one `GET info/refs` read in process (http-refs.ts), else one `git ls-remote` with the
 * request's credentials through the hardened git environment, in a request directory of its own.
 * For following a build in flight, the answered commits and the prebuilds' passes.
 */
import PQueue from 'p-queue';
import { run } from '../../src/exec/run.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import { gitSecrets, requestGitEnv } from './request-git-env.js';
import { GIT_OBJECT_ID_PATTERN } from '../../src/rules/text-patterns.js';
import { advertisedRefs, matchingRefs } from './http-refs.js';

const LS_REMOTE_TIMEOUT_SECONDS = 30;
/** `git ls-remote` processes of this service process at once: a pass over thousands reads 64 repositories at a time. */
const LS_REMOTE_PROCESSES = new PQueue({ concurrency: 16 });
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

/** How refs were listed: in process (one `GET info/refs`), or by a `git ls-remote` process. */
export type ListedVia = 'info/refs' | 'git ls-remote';

/**
 * One `git ls-remote <args> -- <url> <refs>` in a request directory of its own: its listing. It
 * waits its turn among LS_REMOTE_PROCESSES (a wait the signal ends too).
 */
async function gitLsRemote(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
  command: { readonly options: readonly string[]; readonly refs: readonly string[] },
): Promise<Array<[id: string, ref: string]>> {
  return LS_REMOTE_PROCESSES.add(() => gitLsRemoteNow(plan, deps, signal, command), { signal });
}

async function gitLsRemoteNow(
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

/**
 * The refs `git ls-remote -- <url> <refs>` lists: read in process from the repository's
 * advertisement over http(s) (http-refs.ts), else by git (ssh, or whatever the former cannot see).
 */
async function lsRemote(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
  refs: readonly string[],
): Promise<{ listed: Array<[id: string, ref: string]>; via: ListedVia }> {
  const advertised = await advertisedRefs(plan, deps, signal, LS_REMOTE_TIMEOUT_SECONDS * 1000);
  if (advertised !== undefined) return { listed: matchingRefs(advertised, refs), via: 'info/refs' };
  return { listed: await gitLsRemote(plan, deps, signal, { options: [], refs }), via: 'git ls-remote' };
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
  return (await lsRemote(plan, deps, signal, refs)).listed.map(([id]) => id);
}

/**
 * Every branch of the repository and its head, for the prebuilds' passes: over http(s) one
 * `GET info/refs` in process (no process, no request directory: a pass over thousands of
 * repositories reads tens a second), else `git ls-remote --heads`.
 */
export async function remoteHeads(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const listed =
    (await advertisedRefs(plan, deps, signal, LS_REMOTE_TIMEOUT_SECONDS * 1000)) ??
    (await gitLsRemote(plan, deps, signal, { options: ['--heads'], refs: [] }));
  const heads = new Map<string, string>();
  for (const [id, ref] of listed)
    if (ref.startsWith('refs/heads/')) heads.set(ref.slice('refs/heads/'.length), id);
  return heads;
}

/**
 * The commit a clone of the plan's branch would check out now (one listing of its refs): the
 * branch's head, else the tag's commit (peeled), else undefined (no such ref, or an unpeeled tag
 * object). `via`: how the refs were listed.
 */
export async function remoteHead(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config' | 'groups'>,
  signal: AbortSignal,
): Promise<{ head: string | undefined; via: ListedVia }> {
  const refs =
    plan.branch === undefined
      ? ['HEAD']
      : [`refs/heads/${plan.branch}`, `refs/tags/${plan.branch}`, `refs/tags/${plan.branch}^{}`];
  const { listed, via } = await lsRemote(plan, deps, signal, refs);
  const byRef = new Map(listed.map(([id, ref]) => [ref, id]));
  if (plan.branch === undefined) return { head: byRef.get('HEAD'), via };
  // An annotated tag lists its tag object and, peeled, its commit; a lightweight tag its commit only.
  const head =
    byRef.get(`refs/heads/${plan.branch}`) ??
    byRef.get(`refs/tags/${plan.branch}^{}`) ??
    byRef.get(`refs/tags/${plan.branch}`);
  return { head, via };
}
