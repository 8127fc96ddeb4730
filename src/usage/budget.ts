/**
 * Budgets (docs/usage.md): a tenant's quota (`build.quotas`, the first whose glob matches) may
 * give `monthlyBuildMinutes` of run time a calendar month (UTC) and `warnAtPercent` (default 80).
 * Which thresholds one build's run time crossed, whether a tenant is past its budget, and the
 * seconds to the month's end. Pure.
 */
import type { TenantQuota } from '../config/types.js';
import { quotaOf } from '../rules/tenants.js';
import { monthBounds } from './buckets.js';

const DEFAULT_WARN_AT_PERCENT = 80;

/** What a budget event tells (docs/usage.md): the tenant, the month and its minutes. */
export interface BudgetCrossing {
  readonly kind: 'warning' | 'exceeded';
  readonly tenant: string;
  /** `YYYY-MM`, UTC. */
  readonly month: string;
  readonly usedMinutes: number;
  readonly monthlyBuildMinutes: number;
  readonly warnAtPercent: number;
}

export interface Budget {
  /** Run seconds a month. */
  readonly limitSeconds: number;
  readonly warnSeconds: number;
  readonly minutes: number;
  readonly warnAtPercent: number;
}

/** The budget of `tenant`: its quota's (the first whose glob matches), when that quota sets one. */
export function budgetOf(quotas: readonly TenantQuota[], tenant: string): Budget | undefined {
  const quota = quotaOf(quotas, tenant);
  if (quota?.monthlyBuildMinutes === undefined) return undefined;
  const warnAtPercent = quota.warnAtPercent ?? DEFAULT_WARN_AT_PERCENT;
  const limitSeconds = quota.monthlyBuildMinutes * 60;
  return {
    limitSeconds,
    warnSeconds: (limitSeconds * warnAtPercent) / 100,
    minutes: quota.monthlyBuildMinutes,
    warnAtPercent,
  };
}

/** The thresholds a build of `runSeconds` crossed, bringing the month's total to `total`. */
export function crossed(budget: Budget, total: number, runSeconds: number): ('warning' | 'exceeded')[] {
  const before = total - runSeconds;
  const out: ('warning' | 'exceeded')[] = [];
  if (before < budget.warnSeconds && total >= budget.warnSeconds) out.push('warning');
  if (before < budget.limitSeconds && total >= budget.limitSeconds) out.push('exceeded');
  return out;
}

/** Whether a tenant that ran `total` seconds this month may start another build. */
export const withinBudget = (budget: Budget, total: number): boolean => total < budget.limitSeconds;

/** Whole seconds from `now` to the start of the next month (UTC), at least 1. */
export const secondsToMonthEnd = (now: number): number =>
  Math.max(1, Math.ceil((monthBounds(now).end - now) / 1000));
