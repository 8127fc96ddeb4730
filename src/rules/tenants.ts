/**
 * Whose a build is (docs/queue.md, docs/usage.md): its tenant, and the quota that tenant falls
 * under. The queue's fairness and limits and the usage meter's budgets read both from here. Pure.
 */
import { globToRegExp } from './globs.js';

/** A build's tenant: the first segment of its repository's path (`git.example.com/team-a/app` -> `team-a`). */
export const tenantOf = (plan: { readonly url: { readonly host: string; readonly path: string } }): string =>
  plan.url.path
    .split('/')
    .find((segment) => segment !== '')
    ?.replace(/\.git$/, '') ?? plan.url.host;

/** The quota of `tenant`: the first whose glob (`build.quotas[].tenant`) matches. */
export const quotaOf = <Quota extends { readonly tenant: string }>(
  quotas: readonly Quota[],
  tenant: string,
): Quota | undefined => quotas.find((quota) => globToRegExp(quota.tenant).test(tenant));
