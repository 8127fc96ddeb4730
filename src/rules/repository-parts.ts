/**
 * The host and path of a repository URL as the request gave it (`https://h:8443/o/r.git`,
 * `ssh://git@h/o/r`, `git@h:o/r.git`): what event subscriptions and access rules match. Pure.
 */

/** Host lower-cased without its port, path without its leading `/`; undefined when no URL. */
export function repositoryParts(repository: string): { host: string; path: string } | undefined {
  try {
    const url = new URL(repository);
    if (url.hostname === '') return undefined;
    return { host: url.hostname.toLowerCase(), path: url.pathname.replace(/^\//, '') };
  } catch {
    // scp-like `git@host:path`.
    const match = /^(?:[^@/]+@)?([^:/]+):(.+)$/.exec(repository);
    return match === null
      ? undefined
      : { host: (match[1] ?? '').toLowerCase(), path: (match[2] ?? '').replace(/^\//, '') };
  }
}

/** A repository path as access rules see it: no leading or trailing `/`, no trailing `.git`. */
export const repositoryPathOf = (path: string): string =>
  path.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
