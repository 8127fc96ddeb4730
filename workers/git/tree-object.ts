/**
 * A git tree object's entries (pure): `<mode> SP <name> NUL <20-byte id>`, repeated. What the
 * commit's trees read in process (http-trees.ts) and the diff of two trees (tree-diff.ts) read.
 */
import type { TreeEntry } from './tree-listing.js';

/** An entry of a tree object: mode, type, object id, and its name in the tree. */
export type TreeObjectEntry = Omit<TreeEntry, 'path'> & { readonly name: string };

const modeOf = (raw: string): string => raw.padStart(6, '0');
const typeOf = (mode: string): string => (mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob');

/** The entries of a tree object; [] when it is not one. */
export function treeEntries(data: Buffer): TreeObjectEntry[] {
  const out: TreeObjectEntry[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = data.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > data.length) return [];
    const mode = modeOf(data.toString('latin1', at, space));
    out.push({
      mode,
      type: typeOf(mode),
      oid: data.toString('hex', nul + 1, nul + 21),
      name: data.toString('utf8', space + 1, nul),
    });
    at = nul + 21;
  }
  return out;
}
