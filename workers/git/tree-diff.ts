/**
 * The files that differ between two git trees (pure): added, changed or removed, found by walking
 * only the subtrees whose object ids differ (an unchanged folder is one id compared, never read),
 * so the cost is that of the change, not of the repository: the trees read are those on the way
 * to a changed file, and those of a folder added or removed whole. The first `limit` files are
 * named (in tree order), the rest counted.
 */
import type { TreeObjectEntry } from './tree-object.js';

type FileChangeKind = 'added' | 'changed' | 'removed';

interface FileChange {
  /** Repository-relative path of the file. */
  readonly path: string;
  readonly change: FileChangeKind;
}

export interface FileChanges {
  /** The first files that differ (at most the limit). */
  readonly files: readonly FileChange[];
  /** How many more differ. */
  readonly more: number;
}

/** The entries of a tree by its id; undefined when it cannot be read. */
export type TreeReader = (oid: string) => readonly TreeObjectEntry[] | undefined;

/** One side of a comparison: a tree, a file (blob, link or submodule), or nothing. */
export interface Side {
  readonly oid: string;
  readonly type: string;
  readonly mode?: string;
}

/** The number of files named before the rest are only counted. */
const NAMED_FILES = 50;

class Unreadable extends Error {}

class Walk {
  readonly files: FileChange[] = [];
  more = 0;

  constructor(
    private readonly read: TreeReader,
    private readonly limit: number,
  ) {}

  note(path: string, change: FileChangeKind): void {
    if (this.files.length < this.limit) this.files.push({ path, change });
    else this.more += 1;
  }

  entries(oid: string): Map<string, TreeObjectEntry> {
    const entries = this.read(oid);
    if (entries === undefined) throw new Unreadable(oid);
    return new Map(entries.map((entry) => [entry.name, entry]));
  }

  /** Every file under tree `oid` at `path`, as added or removed. */
  whole(path: string, oid: string, change: FileChangeKind): void {
    for (const entry of this.entries(oid).values()) {
      const at = join(path, entry.name);
      if (entry.type === 'tree') this.whole(at, entry.oid, change);
      else this.note(at, change);
    }
  }

  compare(path: string, before: Side | undefined, after: Side | undefined): void {
    if (before?.oid === after?.oid && before?.type === after?.type && before?.mode === after?.mode) return;
    const wasTree = before?.type === 'tree';
    const isTree = after?.type === 'tree';
    if (wasTree && isTree) {
      const a = this.entries(before.oid);
      const b = this.entries(after.oid);
      for (const name of [...new Set([...a.keys(), ...b.keys()])].sort())
        this.compare(join(path, name), a.get(name), b.get(name));
      return;
    }
    if (before !== undefined && after !== undefined && !wasTree && !isTree) {
      this.note(path, 'changed');
      return;
    }
    if (before !== undefined) {
      if (wasTree) this.whole(path, before.oid, 'removed');
      else this.note(path, 'removed');
    }
    if (after !== undefined) {
      if (isTree) this.whole(path, after.oid, 'added');
      else this.note(path, 'added');
    }
  }
}

const join = (path: string, name: string): string => (path === '' ? name : `${path}/${name}`);

/**
 * The files under `path` that differ from `before` to `after` (either absent: the path did not
 * exist on that side), or undefined when a tree on the way cannot be read.
 */
export function diffTrees(
  read: TreeReader,
  path: string,
  before: Side | undefined,
  after: Side | undefined,
  limit = NAMED_FILES,
): FileChanges | undefined {
  const walk = new Walk(read, limit);
  try {
    walk.compare(path, before, after);
  } catch (err) {
    if (err instanceof Unreadable) return undefined;
    throw err;
  }
  return { files: walk.files, more: walk.more };
}
