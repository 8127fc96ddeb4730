/**
 * An open clone whose first step runs without git over http(s): the branch's head from the
 * repository's advertisement and the commit's trees from one tree-only fetch, read in process
 * (http-refs.ts, http-trees.ts). What an unchanged push needs ends there; a checkout clones with git
 * (clone.ts) at the same commit, into the same git log. Where git is needed to see it, git clones.
 */
import { stepFailure } from '../../src/exec/failure.js';
import type { RequestDir } from '../common/request-dir.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { openClone, type OpenClone } from './clone.js';
import type { BlobStore } from './blob-seed.js';
import { locateDefinition } from './commit-definition.js';
import { advertisement, type Advertisement } from './http-refs.js';
import { fetchTrees } from './http-trees.js';
import { gitSecrets } from './request-git-env.js';
import { changedFilesIn } from './tree-changes.js';
import type { StepDeps } from '../common/step-deps.js';

type CloneDeps = Pick<StepDeps, 'config' | 'logStore' | 'groups'> & { readonly blobs?: BlobStore };

const REFS_TIMEOUT_MS = 30_000;

/** The commit and branch a clone of `branch` (undefined: the default branch) would have (pure). */
export function headOf(
  advertised: Advertisement,
  branch: string | undefined,
): { commit: string; branch: string } | undefined {
  if (advertised.capabilities.some((c) => c.startsWith('object-format=') && c !== 'object-format=sha1'))
    return undefined;
  const byRef = new Map(advertised.refs.map(([id, ref]) => [ref, id]));
  if (branch === undefined) {
    const target = advertised.capabilities.find((c) => c.startsWith('symref=HEAD:refs/heads/'));
    const commit = byRef.get('HEAD');
    return target === undefined || commit === undefined
      ? undefined
      : { commit, branch: target.slice('symref=HEAD:refs/heads/'.length) };
  }
  const commit =
    byRef.get(`refs/heads/${branch}`) ??
    byRef.get(`refs/tags/${branch}^{}`) ??
    byRef.get(`refs/tags/${branch}`);
  return commit === undefined ? undefined : { commit, branch };
}

/**
 * The clone opened from the trees read in process when the server allows it (smart HTTP, protocol
 * v2 with filters), else by git (clone.ts). Either way an OpenClone: `checkout` clones with git.
 */
export async function openTreesFirst(
  plan: BuildPlan,
  deps: CloneDeps,
  dir: RequestDir,
  signal: AbortSignal,
): Promise<OpenClone> {
  const advertised = await advertisement(plan, deps, signal, REFS_TIMEOUT_MS);
  const head = advertised === undefined ? undefined : headOf(advertised, plan.branch);
  const trees = head === undefined ? undefined : await fetchTrees(plan, deps, signal, head.commit);
  if (head === undefined || trees === undefined) return openClone(plan, deps, dir, signal);
  const log = await deps.logStore.open('git', gitSecrets(plan));
  log.write(
    `# ${head.branch} is at ${head.commit}; its trees (depth 1, blob:none) fetched and read in process: ` +
      `POST ${plan.url.cloneUrl.replace(/\/+$/, '')}/git-upload-pack\n`,
  );
  const listPaths = (paths: readonly string[]) => Promise.resolve(trees.list(paths));
  let located;
  try {
    located = await locateDefinition(listPaths);
  } catch (err) {
    const failure = stepFailure(err, 'git clone', log);
    await log.close();
    throw failure;
  }
  let cloned: OpenClone | undefined;
  let ended = false;
  return {
    dir: dir.clone,
    branch: head.branch,
    commit: head.commit,
    logId: log.id,
    located,
    listPaths,
    changedFiles: changedFilesIn(plan, deps, trees),
    async checkout() {
      ended = true;
      cloned ??= await openClone(plan, deps, dir, signal, { log, commit: head.commit });
      return cloned.checkout();
    },
    async end(note) {
      if (cloned !== undefined) return cloned.end(note);
      if (ended) return;
      ended = true;
      if (note !== undefined) log.write(`# ${note}\n`);
      await log.close();
    },
  };
}
