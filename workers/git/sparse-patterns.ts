/**
 * The sparse checkout of a read set (pure): non-cone patterns, one per path, anchored at the root
 * (`/dir/` for a folder and everything in it, `/file` for a file, `/*` for the root = everything).
 * Non-cone because cone mode always adds the files at the root and every parent folder, and takes
 * folders only; here the working tree must hold exactly the listed paths.
 * Pattern characters in a path are escaped with `\`; a line break (which no pattern line can hold)
 * becomes `?`, any one character, which still matches it.
 */
import type { ReadPath } from '../builder/read-set.js';

const escapePath = (path: string): string =>
  path.replace(/[\\*?[\]!# ]/g, (c) => `\\${c}`).replace(/[\r\n]/g, '?');

export function sparsePattern(entry: ReadPath): string {
  if (entry.path === '') return '/*';
  return `/${escapePath(entry.path)}${entry.kind === 'dir' ? '/' : ''}`;
}

/** The content of `.git/info/sparse-checkout` for `readSet`. */
export const sparseCheckoutFile = (readSet: readonly ReadPath[]): string =>
  readSet.map((entry) => `${sparsePattern(entry)}\n`).join('');

/** How the clone log shows the read set: `.devcontainer/, docker/app/` (`/` = everything). */
export const describeReadSet = (readSet: readonly ReadPath[]): string =>
  readSet.length === 0
    ? '(none)'
    : readSet.map((e) => (e.path === '' ? '/' : `${e.path}${e.kind === 'dir' ? '/' : ''}`)).join(', ');
