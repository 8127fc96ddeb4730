/**
 * Whose a build is, for the queue's fairness and quotas (docs/queue.md): its tenant, and the
 * quota that tenant falls under. Pure.
 */
import type { TenantQuota } from '../../src/config/types.js';
import { globToRegExp } from '../../src/rules/globs.js';
import type { BuildPlan } from '../plan/plan-types.js';

/** A build's tenant: the first segment of its repository's path (`git.example.com/team-a/app` -> `team-a`). */
export const tenantOf = (plan: Pick<BuildPlan, 'url'>): string =>
  plan.url.path
    .split('/')
    .find((segment) => segment !== '')
    ?.replace(/\.git$/, '') ?? plan.url.host;

/** The quota of `tenant`: the first whose glob matches. */
export const quotaOf = (quotas: readonly TenantQuota[], tenant: string): TenantQuota | undefined =>
  quotas.find((quota) => globToRegExp(quota.tenant).test(tenant));
