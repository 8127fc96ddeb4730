/**
 * The files under each changed path of a build's read set, from the earlier build's trees to this
 * commit's (docs/reuse.md, Why a build ran). This commit's trees are in memory (http-trees.ts);
 * the earlier trees come from one v2 `fetch` of the earlier path trees less the new ones
 * (`want <old tree>`, `have <new tree>`, `filter blob:none`): the server sends only the trees that
 * differ, and tree-diff.ts walks only those. Best effort: what cannot be read is undefined.
 */
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { type CommitTrees, fetchObjects } from './http-trees.js';
import type { PackObject } from './pack.js';
import { diffTrees, type FileChanges, type Side } from './tree-diff.js';
import { treeEntries } from './tree-object.js';

/** A path of the read set whose object id differs: its kind and both ids (anything else: absent). */
export interface PathChange {
  readonly path: string;
  readonly kind: 'dir' | 'file';
  readonly before: string;
  readonly after: string;
}

/** The files that differ under each path (undefined where they could not be read), in order. */
export type ChangedFiles = (
  changes: readonly PathChange[],
  signal: AbortSignal,
) => Promise<(FileChanges | undefined)[]>;

/** The earlier trees are asked for this long at most (a build is waiting). */
const FETCH_TIMEOUT_MS = 20_000;
const OBJECT_ID = /^[0-9a-f]{40}$/;

const sideOf = (id: string, kind: PathChange['kind']): Side | undefined =>
  OBJECT_ID.test(id) ? { oid: id, type: kind === 'dir' ? 'tree' : 'blob' } : undefined;

/** The earlier trees this commit does not have, by one fetch; an empty map when none is needed. */
async function earlierTrees(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  trees: CommitTrees,
  changes: readonly PathChange[],
  signal: AbortSignal,
): Promise<ReadonlyMap<string, PackObject> | undefined> {
  const dirs = changes.filter((change) => change.kind === 'dir');
  const wants = dirs
    .map((change) => change.before)
    .filter((id) => OBJECT_ID.test(id) && trees.tree(id) === undefined);
  if (wants.length === 0) return new Map();
  const haves = dirs.map((change) => change.after).filter((id) => OBJECT_ID.test(id));
  return fetchObjects(plan, deps, signal, { wants, haves }, FETCH_TIMEOUT_MS);
}

/** ChangedFiles against `trees`, this commit's trees read in process. */
export function changedFilesIn(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  trees: CommitTrees,
): ChangedFiles {
  return async (changes, signal) => {
    const earlier = await earlierTrees(plan, deps, trees, changes, signal);
    const read = (oid: string) => {
      const known = trees.tree(oid);
      if (known !== undefined) return known;
      const object = earlier?.get(oid);
      return object?.type === 'tree' ? treeEntries(object.data) : undefined;
    };
    return changes.map((change) =>
      diffTrees(read, change.path, sideOf(change.before, change.kind), sideOf(change.after, change.kind)),
    );
  };
}
