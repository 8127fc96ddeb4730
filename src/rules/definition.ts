/**
 * THE lookup rule of a repository's dev container definition, over a listing of paths (pure):
 * `.devcontainer/devcontainer.json`, else `.devcontainer.json`, else the lexically first
 * `.devcontainer/<folder>/devcontainer.json`. Used on a commit's trees before anything is checked
 * out (git/clone.ts) and on a directory (definition.ts).
 *
 * The listing maps a repository path to `file` (a file, or a symbolic link to one on disk) or
 * `link` (a symbolic link in a commit's tree, not followed there). A candidate behind a `link`
 * folder (`.devcontainer` or `.devcontainer/<folder>` as a symbolic link) is reported, not
 * guessed at: a tree cannot say what a link points at.
 */
export type ListingKind = 'file' | 'link';

export type DefinitionLookup = { readonly path: string } | { readonly linkedFolder: string } | undefined;

export const DEVCONTAINER_DIR = '.devcontainer';
const FIXED = [`${DEVCONTAINER_DIR}/devcontainer.json`, '.devcontainer.json'] as const;

/** `.devcontainer/<name>/devcontainer.json`. */
export const subfolderCandidate = (name: string): string => `${DEVCONTAINER_DIR}/${name}/devcontainer.json`;

/** Names of `.devcontainer/`'s sub-folders the listing knows of (holding a candidate, or a link). */
function subfolders(listing: ReadonlyMap<string, ListingKind>): string[] {
  const names = new Set<string>();
  for (const [path, kind] of listing) {
    const parts = path.split('/');
    if (parts[0] !== DEVCONTAINER_DIR || parts[1] === undefined) continue;
    if (parts.length === 2 && kind === 'link') names.add(parts[1]);
    if (parts.length === 3 && parts[2] === 'devcontainer.json') names.add(parts[1]);
  }
  // Plain code-unit order, as `Array.prototype.sort` of the folder names.
  return [...names].sort();
}

export function findDefinitionIn(listing: ReadonlyMap<string, ListingKind>): DefinitionLookup {
  const candidates = [...FIXED, ...subfolders(listing).map(subfolderCandidate)];
  for (const candidate of candidates) {
    const parts = candidate.split('/');
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      if (listing.get(folder) === 'link') return { linkedFolder: folder };
    }
    if (listing.has(candidate)) return { path: candidate };
  }
  return undefined;
}
