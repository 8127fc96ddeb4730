/**
 * The dev container definition of a cloned commit: found from its trees before any file content is
 * fetched (`ls-tree -r -t` of `.devcontainer/` and `.devcontainer.json`, kept for the build key; the
 * lookup rule: src/rules/definition.ts), then read once its own place is checked out (file -> JSONC
 * -> read set). A config that is a link is followed inside the tree only to a file of its own
 * folder; other links: DEFINITION_OUTSIDE_* (docs/errors.md; docs/behaviour.md, Clones).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { serviceError } from '../../src/errors/errors.js';
import { DEFINITION_ROOTS, findDefinitionIn, type ListingKind } from '../../src/rules/definition.js';
import { parseJsonc } from '../builder/jsonc.js';
import { buildReadSet, type ReadPath, repositoryFolder, repositoryPath } from '../builder/read-set.js';
import { LINK_MODE, parseLsTree, type TreeEntry } from './tree-listing.js';

/** Runs `git <args>` in the clone's environment and resolves with its stdout. */
export type GitCapture = (args: readonly string[]) => Promise<string>;

export interface CommitDefinition {
  /** Repository-relative path of the definition found (a link's own path when it is one). */
  readonly configPath: string;
  /** Its content (the link target's, for a link). */
  readonly text: string;
  /** Parsed JSONC, or undefined when it does not parse (the CLI reports that in the build log). */
  readonly parsed: unknown;
  /** The object id of the blob `text` was read from (the link target's, for a link). */
  readonly blobId: string;
}

export interface CommitReadSet {
  /** Undefined: the commit holds no definition (the fallback applies, or NO_DEFINITION). */
  readonly definition?: CommitDefinition;
  /** What the build reads (builder/read-set.ts), the sparse checkout's paths. */
  readonly readSet: ReadPath[];
}

/** The blob holding the config's content: its own, or that of the file of its folder it links to. */
async function contentEntry(
  git: GitCapture,
  entries: ReadonlyMap<string, TreeEntry>,
  entry: TreeEntry,
): Promise<TreeEntry> {
  if (entry.mode !== LINK_MODE) return entry;
  const target = await git(['cat-file', 'blob', entry.oid]);
  const resolved = repositoryPath(repositoryFolder(entry.path), target);
  if (resolved === undefined) throw serviceError('DEFINITION_OUTSIDE_CLONE', { path: entry.path });
  const folder = repositoryFolder(entry.path);
  const linked = entries.get(resolved);
  if (
    folder === '' ||
    !resolved.startsWith(`${folder}/`) ||
    linked === undefined ||
    linked.mode === LINK_MODE
  )
    throw serviceError('DEFINITION_OUTSIDE_READ_SET', { path: entry.path });
  return linked;
}

/** Where a commit's definition is: its tree entry among those of `.devcontainer/` and `.devcontainer.json`. */
export interface LocatedDefinition {
  readonly entry: TreeEntry;
  readonly entries: ReadonlyMap<string, TreeEntry>;
  /** Every entry (trees included) of `.devcontainer/` (recursively) and `.devcontainer.json`, by path. */
  readonly listing: ReadonlyMap<string, TreeEntry>;
  /** The definition's own place (its folder, or a root `.devcontainer.json` alone): fetched first. */
  readonly ownPlace: ReadPath[];
}

/** The entries (trees included) of some paths of a commit and everything under them, by path. */
export type TreeLister = (paths: readonly string[]) => Promise<TreeEntry[]>;

/** A TreeLister by `git ls-tree -r -t -z --full-tree <treeish> -- <paths>` (literal paths). */
export const gitTreeLister =
  (git: GitCapture, treeish: string): TreeLister =>
  async (paths) =>
    parseLsTree(
      await git([
        'ls-tree',
        '-r',
        '-t',
        '-z',
        '--full-tree',
        treeish,
        '--',
        ...paths.map((p) => `:(literal)${p}`),
      ]),
    );

/** Finds the definition from the trees alone (no file content needed); undefined: none. */
export async function locateDefinition(list: TreeLister): Promise<LocatedDefinition | undefined> {
  const tree = new Map((await list(DEFINITION_ROOTS)).map((e) => [e.path, e] as const));
  const entries = new Map([...tree].filter(([, e]) => e.type === 'blob'));
  const listing = new Map<string, ListingKind>(
    [...entries.values()].map((e) => [e.path, e.mode === LINK_MODE ? 'link' : 'file']),
  );
  const found = findDefinitionIn(listing);
  if (found === undefined) return undefined;
  if ('linkedFolder' in found)
    throw serviceError('DEFINITION_OUTSIDE_READ_SET', { path: found.linkedFolder });
  const entry = entries.get(found.path);
  if (entry === undefined) throw serviceError('COMMAND_OUTPUT_UNEXPECTED', { command: 'git ls-tree' });
  // A definition naming nothing reads just its own place: always part of the full read set.
  return { entry, entries, listing: tree, ownPlace: buildReadSet(found.path, {}) };
}

/**
 * A checked-out file of the clone, by its repository path. Every folder on the way is a tree of the
 * commit (a directory of the working tree) and the file itself a regular one; O_NOFOLLOW all the same.
 */
async function readCheckedOut(cloneDir: string, path: string): Promise<string> {
  const file = await open(join(cloneDir, ...path.split('/')), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await file.readFile('utf8');
  } finally {
    await file.close();
  }
}

/**
 * Reads and parses a located definition once its own place is checked out (the file as the
 * Dev Containers CLI reads it, no git process; a link's target through `git cat-file`, its blob
 * local by then) and computes the read set. No definition: the fallback's, nothing.
 */
export async function readDefinition(
  git: GitCapture,
  cloneDir: string,
  located: LocatedDefinition | undefined,
): Promise<CommitReadSet> {
  if (located === undefined) return { readSet: buildReadSet(undefined, undefined) };
  const content = await contentEntry(git, located.entries, located.entry);
  const text = await readCheckedOut(cloneDir, content.path);
  let parsed: unknown;
  try {
    parsed = parseJsonc(text);
  } catch {
    parsed = undefined;
  }
  const configPath = located.entry.path;
  return {
    definition: { configPath, text, parsed, blobId: content.oid },
    readSet: buildReadSet(configPath, parsed),
  };
}
