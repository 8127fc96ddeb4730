/**
 * The usage of the builds, per tenant, repository and trigger (docs/usage.md): the one owner of
 * metering (each ended build counted once, from its finished record), of GET /usage's reports, of
 * the monthly budgets (the 429 of a tenant past its budget, the warning and exceeded events) and of
 * the service_tenant_* metrics. The rules are pure (metering.ts, report.ts, budget.ts); the store
 * is the mode's (file-store.ts, redis-store.ts).
 */
import type { BuildRecord } from '../builds/types.js';
import type { TenantQuota } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import type { BudgetCrossing } from './budget.js';
import type { Logger } from '../observability/logger.js';
import { TENANT_BUILD_OUTCOMES, type Metrics } from '../observability/metrics.js';
import { monthOf, rowId } from './buckets.js';
import { budgetOf, crossed, secondsToMonthEnd, withinBudget } from './budget.js';
import { meteringOf, usageRepository, vectorWithSaved, type EndedBuild, type Metering } from './metering.js';
import type { UsageQuery } from './query.js';
import { usageReport, type UsageReport } from './report.js';
import type { UsageStore } from './store.js';

interface UsageSettings {
  readonly quotas: readonly TenantQuota[];
  /** Tenants labelled by name in the metrics besides those the quotas name. */
  readonly metricTenants: readonly string[];
}

export interface UsageDeps {
  readonly store: UsageStore;
  readonly settings: UsageSettings;
  readonly metrics: Pick<
    Metrics,
    'tenantRunSeconds' | 'tenantSavedSeconds' | 'tenantBuildsTotal' | 'tenantBudgetUsed'
  >;
  readonly logger: Pick<Logger, 'warn'>;
  /** Told of each budget threshold a tenant's month crossed (an event, docs/events.md). */
  readonly budgetCrossed?: (crossing: BudgetCrossing) => Promise<void>;
  readonly now?: () => number;
}

/** A tenant's month as the budget sees it. */
export interface TenantBudget {
  readonly tenant: string;
  readonly month: string;
  readonly usedMinutes: number;
  readonly monthlyBuildMinutes: number;
  readonly warnAtPercent: number;
}

const minutes = (seconds: number): number => Math.round((seconds / 60) * 1000) / 1000;

export class Usage {
  readonly #deps: UsageDeps;
  readonly #now: () => number;
  /** Tenants labelled by name in the metrics (others: `other`). */
  readonly #named: ReadonlySet<string>;

  constructor(deps: UsageDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    const quotaNames = deps.settings.quotas.map((quota) => quota.tenant).filter((name) => !/[*?]/.test(name));
    this.#named = new Set([...quotaNames, ...deps.settings.metricTenants]);
    this.#zeroSeries();
  }

  /** Each named tenant's series (and other's) exist from the start at 0. */
  #zeroSeries(): void {
    const { metrics, settings } = this.#deps;
    for (const tenant of [...this.#named, 'other']) {
      metrics.tenantRunSeconds.inc({ tenant }, 0);
      metrics.tenantSavedSeconds.inc({ tenant }, 0);
      for (const outcome of TENANT_BUILD_OUTCOMES) metrics.tenantBuildsTotal.inc({ tenant, outcome }, 0);
      if (tenant !== 'other' && budgetOf(settings.quotas, tenant) !== undefined)
        metrics.tenantBudgetUsed.set({ tenant }, 0);
    }
  }

  /** The build-ended listener: the build's usage counted once (a failure is logged, never thrown). */
  readonly onBuildEnded = async (record: BuildRecord): Promise<void> => {
    try {
      await this.meter({ record, endedAtMs: this.#now() });
    } catch (err) {
      this.#deps.logger.warn({ err, buildId: record.id }, 'the usage of a build could not be counted');
    }
  };

  /** Counts `ended` unless it was counted before (on any replica); whether it counted. O(1 + steps). */
  async meter(ended: EndedBuild): Promise<boolean> {
    const metering = meteringOf(ended);
    const { store } = this.#deps;
    const times = await store.savedTimes(metering.reusedRefs, metering.cachedStepIds);
    const saved = (times.image ?? 0) + times.steps.reduce<number>((sum, s) => sum + (s ?? 0), 0);
    const { runSeconds } = metering.counters;
    const result = await store.add({
      buildId: metering.buildId,
      hour: metering.hour,
      rowId: rowId(metering.row),
      vector: vectorWithSaved(metering, saved),
      tenant: metering.row.tenant,
      month: metering.month,
      runSeconds,
      ...(metering.madeImage === undefined ? {} : { madeImage: metering.madeImage }),
      ranSteps: metering.ranSteps,
    });
    if (!result.counted) return false;
    this.#count(metering, saved);
    await this.#tellCrossings(metering, result.monthRunSeconds);
    return true;
  }

  #count(metering: Metering, saved: number): void {
    const tenant = this.#named.has(metering.row.tenant) ? metering.row.tenant : 'other';
    const { metrics } = this.#deps;
    const { failed, reused, runSeconds } = metering.counters;
    metrics.tenantRunSeconds.inc({ tenant }, runSeconds);
    metrics.tenantSavedSeconds.inc({ tenant }, saved);
    const outcome = failed > 0 ? 'failed' : reused > 0 ? 'reused' : 'built';
    metrics.tenantBuildsTotal.inc({ tenant, outcome });
  }

  async #tellCrossings(metering: Metering, total: number): Promise<void> {
    const { tenant } = metering.row;
    const budget = budgetOf(this.#deps.settings.quotas, tenant);
    if (budget === undefined) return;
    if (this.#named.has(tenant) && budget.limitSeconds > 0)
      this.#deps.metrics.tenantBudgetUsed.set({ tenant }, total / budget.limitSeconds);
    if (this.#deps.budgetCrossed === undefined) return;
    for (const kind of crossed(budget, total, metering.counters.runSeconds)) {
      await this.#deps.budgetCrossed({
        kind,
        tenant,
        month: metering.month,
        usedMinutes: minutes(total),
        monthlyBuildMinutes: budget.minutes,
        warnAtPercent: budget.warnAtPercent,
      });
    }
  }

  /** GET /usage: the rows of `query` whose repository `visible` lets through. O(hours x rows). */
  async report(query: UsageQuery, visible: (repository: string) => boolean): Promise<UsageReport> {
    const buckets = await this.#deps.store.read(query.fromHour, query.toHour);
    return usageReport(
      buckets.filter((bucket) => visible(bucket.repository)),
      query,
    );
  }

  /**
   * Throws 429 TENANT_BUDGET when the tenant of `repository` is past its budget this month (a build
   * about to run BuildKit asks; a reuse never does). O(1).
   */
  async refuseOverBudget(repository: string): Promise<void> {
    const { tenant } = usageRepository(repository);
    const budget = budgetOf(this.#deps.settings.quotas, tenant);
    if (budget === undefined) return;
    const now = this.#now();
    if (withinBudget(budget, await this.#deps.store.monthRunSeconds(tenant, monthOf(now)))) return;
    throw serviceError(
      'TENANT_BUDGET',
      { tenant, minutes: budget.minutes },
      { retryAfterSeconds: secondsToMonthEnd(now) },
    );
  }

  /** The budget of `tenant` this month, when its quota sets one. O(1). */
  async budgetOf(tenant: string): Promise<TenantBudget | undefined> {
    const budget = budgetOf(this.#deps.settings.quotas, tenant);
    if (budget === undefined) return undefined;
    const month = monthOf(this.#now());
    const used = await this.#deps.store.monthRunSeconds(tenant, month);
    return {
      tenant,
      month,
      usedMinutes: minutes(used),
      monthlyBuildMinutes: budget.minutes,
      warnAtPercent: budget.warnAtPercent,
    };
  }
}
