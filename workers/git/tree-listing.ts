import { serviceError } from '../../src/errors/errors.js';

/**
 * `git ls-tree -z` output as entries (pure): `<mode> SP <type> SP <oid> TAB <path> NUL`.
 * Paths are raw (no quoting with -z).
 */
export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly oid: string;
  readonly path: string;
}

/** Mode of a symbolic link in a tree. */
export const LINK_MODE = '120000';

const ENTRY = /^(\d{6}) (\w+) ([0-9a-f]{40,64})\t([\s\S]+)$/;

export function parseLsTree(output: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const record of output.split('\0')) {
    if (record === '') continue;
    const m = ENTRY.exec(record);
    if (m === null) throw serviceError('COMMAND_OUTPUT_UNEXPECTED', { command: 'git ls-tree' });
    entries.push({ mode: m[1] ?? '', type: m[2] ?? '', oid: m[3] ?? '', path: m[4] ?? '' });
  }
  return entries;
}

/** A regular file (not a link, a tree or a submodule): its blob is the file's content. */
export const isRegularFile = (entry: TreeEntry): boolean =>
  entry.type === 'blob' && (entry.mode === '100644' || entry.mode === '100755');
