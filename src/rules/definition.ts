/**
 * Where a dev container definition lives, and the one lookup rule over a listing of paths (pure),
 * as the Dev Containers CLI looks (docs/behaviour.md): on a commit's trees (workers/git) and on disk
 * (workers/builder/definition.ts). A listing maps a path to `file` or `link` (a symbolic link in a
 * tree, not followed): a candidate behind a linked folder is reported, not guessed at.
 */
export type ListingKind = 'file' | 'link';

export type DefinitionLookup = { readonly path: string } | { readonly linkedFolder: string } | undefined;

export const DEVCONTAINER_DIR = '.devcontainer';
const FILE_NAME = 'devcontainer.json';
/** The definition at the repository's root: `.devcontainer.json`. */
const ROOT_DEFINITION = `.${FILE_NAME}`;
/** The candidates tried first, in order: `.devcontainer/devcontainer.json`, `.devcontainer.json`. */
export const FIXED_CANDIDATES: readonly string[] = [`${DEVCONTAINER_DIR}/${FILE_NAME}`, ROOT_DEFINITION];
/** The paths that hold every candidate (a listing of them, recursively, finds the definition). */
export const DEFINITION_ROOTS: readonly string[] = [DEVCONTAINER_DIR, ROOT_DEFINITION];

/** `.devcontainer/<name>/devcontainer.json`. */
export const subfolderCandidate = (name: string): string => `${DEVCONTAINER_DIR}/${name}/${FILE_NAME}`;

/** The places in words, for error texts. */
export const DEFINITION_PLACES = `${FIXED_CANDIDATES.join(', ')} or ${subfolderCandidate('<folder>')}`;

/** Names of `.devcontainer/`'s sub-folders the listing knows of (holding a candidate, or a link). */
function subfolders(listing: ReadonlyMap<string, ListingKind>): string[] {
  const names = new Set<string>();
  for (const [path, kind] of listing) {
    const parts = path.split('/');
    if (parts[0] !== DEVCONTAINER_DIR || parts[1] === undefined) continue;
    if (parts.length === 2 && kind === 'link') names.add(parts[1]);
    if (parts.length === 3 && parts[2] === FILE_NAME) names.add(parts[1]);
  }
  // Plain code-unit order, as `Array.prototype.sort` of the folder names.
  return [...names].sort();
}

export function findDefinitionIn(listing: ReadonlyMap<string, ListingKind>): DefinitionLookup {
  const candidates = [...FIXED_CANDIDATES, ...subfolders(listing).map(subfolderCandidate)];
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
