/**
 * Where a build runs (docs/fleet.md): rendezvous (highest random weight) hashing of the repository
 * (its URL without scheme, credentials, port or `.git`, plus the branch) over the builders'
 * endpoints. A repository keeps its builder, which holds its cache, for as long as that builder is
 * there; a builder leaving moves only its own repositories. Pure.
 */
import { createHash } from 'node:crypto';

/** `https://u:p@Git.Example:443/org/repo.git` and `git@git.example:org/repo` -> `git.example/org/repo`. */
export function normalisedRepository(repository: string): string {
  const trim = (path: string): string =>
    path
      .replace(/\/+$/, '')
      .replace(/\.git$/, '')
      .replace(/^\/+/, '');
  try {
    const url = new URL(repository);
    return `${url.hostname.toLowerCase()}/${trim(decodeURIComponent(url.pathname))}`;
  } catch {
    // scp-like `user@host:path`
    const scp = /^(?:[^@/]+@)?([^:/]+):(.*)$/.exec(repository);
    return scp === null ? trim(repository) : `${(scp[1] ?? '').toLowerCase()}/${trim(scp[2] ?? '')}`;
  }
}

/** The placement key of a build: the normalised repository and the branch (none: the default branch). */
export function placementKey(repository: string, branch: string | undefined): string {
  return `${normalisedRepository(repository)}#${branch ?? ''}`;
}

function weight(key: string, endpoint: string): bigint {
  return createHash('sha256').update(key).update('\0').update(endpoint).digest().readBigUInt64BE(0);
}

/** The endpoints in the key's order: the first is its home, the next ones where it goes when that one cannot take it. */
export function placementOrder(key: string, endpoints: readonly string[]): string[] {
  return endpoints
    .map((endpoint) => ({ endpoint, weight: weight(key, endpoint) }))
    .sort((a, b) => (a.weight === b.weight ? 0 : a.weight > b.weight ? -1 : 1))
    .map((entry) => entry.endpoint);
}
