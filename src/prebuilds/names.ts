/**
 * The pure rules of prebuilds (docs/prebuilds.md): the branch tag, the key of a configuration's
 * branch, and the key a repository URL is matched by (host and path, whatever the scheme). Branch and path globs: src/rules/globs.ts.
 */

/** `<name>:<branch>` tag part: lower case, every character outside `[a-z0-9_.-]` made `-`. */
export function branchTag(branch: string): string {
  const tag = branch.toLowerCase().replace(/[^a-z0-9_.-]/g, '-');
  // A tag starts with a word character and has at most 128 characters.
  return (/^[a-z0-9_]/.test(tag) ? tag : `_${tag}`).slice(0, 128);
}

/**
 * The key of a configuration's branch (the configuration's index and the branch): the one key of
 * the prebuild in flight, the refresh's baseline and the reconciler's last decision. O(1).
 */
export const branchKey = (configuration: number, branch: string): string => `${configuration}\0${branch}`;

/**
 * The key of a repository URL: lower-cased host and path, without `.git`, credentials, port or
 * scheme (`https://h/o/r.git`, `ssh://git@h:22/o/r` and `git@h:o/r.git` are one repository);
 * undefined when the text is no URL.
 */
export function repositoryKey(url: string): string | undefined {
  const text = url.trim();
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)([^\s]+)$/.exec(text);
  let host: string;
  let path: string;
  if (scp !== null && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    host = scp[1] ?? '';
    path = scp[2] ?? '';
  } else {
    try {
      const parsed = new URL(text);
      host = parsed.hostname;
      path = parsed.pathname;
    } catch {
      return undefined;
    }
  }
  const clean = path.replace(/^\/+|\/+$/g, '').replace(/\.git$/i, '');
  if (host === '' || clean === '') return undefined;
  return `${host.toLowerCase()}/${clean.toLowerCase()}`;
}

/** The all-zero commit id a forge sends for a created or deleted ref. */
export const isZeroCommit = (id: string): boolean => /^0+$/.test(id);
