/**
 * GET /usage (docs/usage.md): the usage per tenant, grouped as `by` asks, as JSON or, with
 * `Accept: text/csv`, as CSV; and GET /usage/budgets, each visible tenant's month against its
 * budget (the page /ui/usage draws its bars from it). `admin` sees every row; any other caller
 * the rows of the repositories its rules let it `read` (identities off: everyone sees all).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { RepositoryResource } from '../auth/rules.js';
import { parseUsageQuery } from '../usage/query.js';
import { usageCsv } from '../usage/report.js';
import type { TenantBudget } from '../usage/usage.js';
import type { AppContext } from './context.js';
import { callerOf } from './access.js';

type UsageContext = Pick<AppContext, 'access'> & { readonly usage: NonNullable<AppContext['usage']> };

/** A usage repository (`host/path`) as access rules see it. */
function resourceOf(repository: string): RepositoryResource {
  const slash = repository.indexOf('/');
  return slash < 0
    ? { host: repository, path: '' }
    : { host: repository.slice(0, slash), path: repository.slice(slash + 1) };
}

/** Which repositories the caller may see: all for `admin`, else those its rules let it read (memoised). */
async function visibility(ctx: UsageContext, koaCtx: Context): Promise<(repository: string) => boolean> {
  const identity = await callerOf(ctx.access, koaCtx, 'read');
  if (ctx.access.allows(identity, 'admin', {})) return () => true;
  const seen = new Map<string, boolean>();
  return (repository) => {
    let allowed = seen.get(repository);
    if (allowed === undefined) {
      allowed = ctx.access.allows(identity, 'read', { repository: resourceOf(repository) });
      seen.set(repository, allowed);
    }
    return allowed;
  };
}

export function createUsageRouter(ctx: UsageContext): Router {
  const router = new Router();
  router.get('/usage', async (koaCtx) => {
    const query = parseUsageQuery(koaCtx.query, Date.now());
    const report = await ctx.usage.report(query, await visibility(ctx, koaCtx));
    koaCtx.set('Cache-Control', 'no-store');
    if (koaCtx.accepts('application/json', 'text/csv') === 'text/csv') {
      koaCtx.type = 'text/csv; charset=utf-8; header=present';
      koaCtx.body = usageCsv(report);
      return;
    }
    koaCtx.body = report;
  });
  router.get('/usage/budgets', async (koaCtx) => {
    const query = parseUsageQuery({}, Date.now());
    const report = await ctx.usage.report({ ...query, by: [] }, await visibility(ctx, koaCtx));
    const budgets: TenantBudget[] = [];
    for (const row of report.rows) {
      const budget = await ctx.usage.budgetOf(row.tenant);
      if (budget !== undefined) budgets.push(budget);
    }
    koaCtx.set('Cache-Control', 'no-store');
    koaCtx.body = { month: query.from.slice(0, 7), budgets };
  });
  return router;
}
