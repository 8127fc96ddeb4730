/**
 * Whose a build is (docs/queue.md, docs/usage.md): its tenant, and the quota that tenant falls
 * under. The queue's fairness and limits and the usage meter's budgets read both from here. Pure.
 */
import { globToRegExp } from './globs.js';
import { repositoryParts } from './repository-parts.js';

/** The owner of a repository: the first segment of its path (no `.git`), else its host. */
const ownerOf = (host: string, path: string): string =>
  path
    .split('/')
    .find((segment) => segment !== '')
    ?.replace(/\.git$/, '') ?? host;

/** A build's tenant: the first segment of its repository's path (`git.example.com/team-a/app` -> `team-a`). */
export const tenantOf = (plan: { readonly url: { readonly host: string; readonly path: string } }): string =>
  ownerOf(plan.url.host, plan.url.path);

/**
 * The tenant of a repository as a request gave it, as `tenantOf` names it (`unknown` when it is
 * no URL): the tenant of a record made without the one its queue named.
 */
export function repositoryTenant(repository: string): string {
  const parts = repositoryParts(repository);
  return parts === undefined ? 'unknown' : ownerOf(parts.host, parts.path);
}

/** The quota of `tenant`: the first whose glob (`build.quotas[].tenant`) matches. */
export const quotaOf = <Quota extends { readonly tenant: string }>(
  quotas: readonly Quota[],
  tenant: string,
): Quota | undefined => quotas.find((quota) => globToRegExp(quota.tenant).test(tenant));
