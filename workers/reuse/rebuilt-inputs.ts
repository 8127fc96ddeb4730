/**
 * Why a build ran, input by input (docs/reuse.md, Why a build ran): the inputs that differ from the
 * last build of its repository and branch (input-changes.ts), each path of the read set with the
 * files under it that differ when the commit's trees can tell them (workers/git/tree-changes.ts),
 * and the one line the build log and the record say each with.
 */
import type { FileChanges } from '../git/tree-diff.js';
import type { PathChange } from '../git/tree-changes.js';
import { describeChange, type InputChange } from './input-changes.js';

/** An input that differs; a path's with the files under it that differ, when they could be read. */
export interface RebuiltInput extends InputChange {
  readonly files?: FileChanges;
}

/** The files under each changed path, in order (undefined where unknown). */
export type FilesOf = (changes: readonly PathChange[]) => Promise<readonly (FileChanges | undefined)[]>;

/** `changes`, each path with its files when `filesOf` can read them. */
export async function withFiles(
  changes: readonly InputChange[],
  filesOf: FilesOf | undefined,
): Promise<RebuiltInput[]> {
  const paths = changes.flatMap((change): PathChange[] =>
    change.path === undefined
      ? []
      : [{ ...change.path, before: change.before ?? '', after: change.after ?? '' }],
  );
  if (filesOf === undefined || paths.length === 0) return [...changes];
  const files = await filesOf(paths);
  let at = 0;
  return changes.map((change) => {
    if (change.path === undefined) return change;
    const found = files[at++];
    return found === undefined ? change : { ...change, files: found };
  });
}

/** The line for one input: a path's with its files, `... -> ...: app.txt changed, old.txt removed`. */
export function describeRebuilt(change: RebuiltInput): string {
  const line = describeChange(change);
  if (change.files === undefined) return line;
  const { files, more } = change.files;
  const named = files.map((file) => `${file.path} ${file.change}`);
  if (more > 0) named.push(`${more} more file${more === 1 ? '' : 's'}`);
  return named.length === 0 ? line : `${line}: ${named.join(', ')}`;
}
