/**
 * /ui/usage (docs/usage.md): per tenant, this month and the last, from GET /usage and
 * GET /usage/budgets: builds, run and saved minutes, the cache hit ratio, the budget used as a
 * bar, a chart of the daily run and saved minutes drawn as SVG elements (no markup from any value:
 * every text is a text node), and a link to the month's CSV.
 */
import { call, getJson } from './api.js';
import { h, replace, table } from './dom.js';

interface UsageRow {
  readonly tenant: string;
  readonly day?: string;
  readonly builds: number;
  readonly reused: number;
  readonly runSeconds: number;
  readonly savedSeconds: number;
  readonly cachedSteps: number;
  readonly totalSteps: number;
}
interface Budget {
  readonly tenant: string;
  readonly usedMinutes: number;
  readonly monthlyBuildMinutes: number;
}

const SVG = 'http://www.w3.org/2000/svg';
const CHART = { width: 620, height: 140, pad: 24 } as const;

/** `YYYY-MM-DD` of the first day of the month `offset` months from now (UTC). */
function monthStart(offset: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1)).toISOString().slice(0, 10);
}

const minutes = (seconds: number): string => (seconds / 60).toFixed(1);

function svg(tag: string, attributes: Readonly<Record<string, string | number>>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The daily run (left bar) and saved (right bar) minutes of one tenant's month. */
function dailyChart(tenant: string, days: readonly string[], rows: readonly UsageRow[]): SVGElement {
  const byDay = new Map(rows.map((row) => [row.day ?? '', row]));
  const peak = Math.max(1, ...rows.flatMap((row) => [row.runSeconds, row.savedSeconds]));
  const slot = (CHART.width - CHART.pad) / days.length;
  const scale = (seconds: number): number => (seconds / peak) * (CHART.height - CHART.pad);
  const chart = svg('svg', {
    class: 'usage-chart',
    viewBox: `0 0 ${CHART.width} ${CHART.height}`,
    role: 'img',
    'aria-label': `${tenant}: daily run and saved minutes`,
  });
  days.forEach((day, index) => {
    const row = byDay.get(day);
    const x = CHART.pad + index * slot;
    const base = CHART.height - CHART.pad;
    for (const [offset, seconds, kind] of [
      [0, row?.runSeconds ?? 0, 'run'],
      [slot / 2, row?.savedSeconds ?? 0, 'saved'],
    ] as const) {
      const bar = svg('rect', {
        class: `bar ${kind}`,
        x: x + offset,
        y: base - scale(seconds),
        width: Math.max(1, slot / 2 - 1),
        height: scale(seconds),
      });
      bar.appendChild(svg('title', {}, `${day} ${kind}: ${minutes(seconds)} min`));
      chart.appendChild(bar);
    }
  });
  chart.appendChild(svg('text', { x: 0, y: 12, class: 'axis' }, `${minutes(peak)} min`));
  chart.appendChild(svg('text', { x: CHART.pad, y: CHART.height - 6, class: 'axis' }, days[0] ?? ''));
  return chart;
}

/** The days of `[from, to)`. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(from); t < Date.parse(to); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

function budgetBar(budget: Budget | undefined): HTMLElement | string {
  if (budget === undefined) return 'no budget';
  const bar = h('meter', {
    class: 'budget',
    title: `${budget.usedMinutes} of ${budget.monthlyBuildMinutes} min`,
  });
  bar.setAttribute('min', '0');
  bar.setAttribute('max', String(budget.monthlyBuildMinutes));
  bar.setAttribute('high', String(budget.monthlyBuildMinutes * 0.8));
  bar.setAttribute('value', String(Math.min(budget.usedMinutes, budget.monthlyBuildMinutes)));
  const percent =
    budget.monthlyBuildMinutes > 0 ? (100 * budget.usedMinutes) / budget.monthlyBuildMinutes : 0;
  return h('span', { class: 'budget-used' }, bar, ` ${percent.toFixed(0)} %`);
}

/** A month's section: the tenants' table, each tenant's chart, and the CSV link. */
async function monthSection(
  from: string,
  to: string,
  budgets: readonly Budget[] | undefined,
  signal: AbortSignal,
) {
  const query = `from=${from}&to=${to}&by=tenant,day`;
  const report = await getJson<{ rows: UsageRow[] }>(`/usage?${query}`, signal);
  const tenants = [...new Set(report.rows.map((row) => row.tenant))];
  const sums = (tenant: string) => {
    const rows = report.rows.filter((row) => row.tenant === tenant);
    const sum = (pick: (row: UsageRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
    return {
      rows,
      builds: sum((r) => r.builds),
      run: sum((r) => r.runSeconds),
      saved: sum((r) => r.savedSeconds),
      cached: sum((r) => r.cachedSteps),
      steps: sum((r) => r.totalSteps),
    };
  };
  const csv = await (await call(`/usage?${query}`, { signal, headers: { Accept: 'text/csv' } })).blob();
  const link = h('a', { class: 'csv', href: URL.createObjectURL(csv) }, 'CSV');
  link.setAttribute('download', `usage-${from.slice(0, 7)}.csv`);
  const days = daysOf(from, to);
  return h(
    'section',
    { class: 'usage-month', 'data-month': from.slice(0, 7) },
    h('h2', {}, from.slice(0, 7), ' ', link),
    tenants.length === 0
      ? h('p', { class: 'empty' }, 'No builds.')
      : table(
          ['Tenant', 'Builds', 'Run minutes', 'Saved minutes', 'Cache hit ratio', 'Budget used'],
          tenants.map((tenant) => {
            const s = sums(tenant);
            const ratio = s.steps === 0 ? '' : `${((100 * s.cached) / s.steps).toFixed(0)} %`;
            const budget = budgets === undefined ? '' : budgetBar(budgets.find((b) => b.tenant === tenant));
            return [tenant, s.builds, minutes(s.run), minutes(s.saved), ratio, budget];
          }),
        ),
    ...tenants.map((tenant) =>
      h(
        'figure',
        { class: 'usage-tenant', 'data-tenant': tenant },
        h('figcaption', {}, tenant),
        dailyChart(tenant, days, sums(tenant).rows),
      ),
    ),
  );
}

export async function usagePage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h('div', { class: 'usage', 'aria-busy': 'true' });
  replace(
    root,
    h('h1', {}, 'Usage'),
    h('p', {}, 'Run minutes (dark) and minutes saved by reuse and the cache (light), per day.'),
    body,
  );
  const budgets = (await getJson<{ budgets: Budget[] }>('/usage/budgets', signal)).budgets;
  const sections = [
    await monthSection(monthStart(0), monthStart(1), budgets, signal),
    await monthSection(monthStart(-1), monthStart(0), undefined, signal),
  ];
  replace(body, ...sections);
  body.setAttribute('aria-busy', 'false');
}
