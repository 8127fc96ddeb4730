// The one check of the chart's PromQL (alert rules, dashboard queries) against what a real running
// service exports: every series a query selects exists in its /metrics, with the labels and label
// values the query matches on.
import { startApp } from '../app.js';
import { scrapeMetrics, type Exposition } from '../metrics.js';

/** metric name -> label name -> label values seen in /metrics. */
export type Exported = Map<string, Map<string, Set<string>>>;

/** Series that do not come from the service, with their source. */
const EXTERNAL_METRICS: Record<string, string> = { kube_pod_status_ready: 'kube-state-metrics' };

/** Labels Prometheus adds to every scraped series (the ServiceMonitor's target labels). */
const TARGET_LABELS = new Set(['namespace', 'job', 'pod', 'instance', 'service', 'endpoint', 'container']);

/** PromQL functions, aggregations and keywords the chart's queries may use; any other bare word fails. */
const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'clamp_min',
  'by',
  'without',
  'on',
  'ignoring',
  'and',
  'or',
  'unless',
  'bool',
  'label_values',
]);

/** Scrapes a freshly started service's /metrics into series names, labels and label values. */
export async function scrapeExported(): Promise<Exported> {
  // Two builders, so that the per-builder series exist (they are set for each endpoint at start),
  // and a budgeted tenant, so that the per-tenant series exist (set for each named tenant at start).
  const app = await startApp({
    builderEndpoints: ['tcp://127.0.0.1:1', 'tcp://127.0.0.1:2'],
    build: { quotas: [{ tenant: 'team-a', monthlyBuildMinutes: 60 }] },
  });
  let samples: Exposition['samples'];
  try {
    ({ samples } = await scrapeMetrics(app.url));
  } finally {
    await app.close();
  }
  const exported: Exported = new Map();
  for (const sample of samples) {
    const labels = exported.get(sample.name) ?? new Map<string, Set<string>>();
    exported.set(sample.name, labels);
    for (const [name, value] of Object.entries(sample.labels)) {
      const values = labels.get(name) ?? new Set<string>();
      labels.set(name, values);
      values.add(value);
    }
  }
  return exported;
}

interface Matcher {
  label: string;
  op: string;
  value: string;
}
export interface Selector {
  metric: string;
  matchers: Matcher[];
}

const SELECTOR = /([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g;
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/** The `metric{matchers}` selectors of a query (the chart writes every series with braces). */
export const selectors = (expr: string): Selector[] =>
  [...expr.matchAll(SELECTOR)].map((m) => ({
    metric: m[1] ?? '',
    matchers: [...(m[2] ?? '').matchAll(MATCHER)].map((l) => ({
      label: l[1] ?? '',
      op: l[2] ?? '',
      value: l[3] ?? '',
    })),
  }));

const GROUPING = /\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g;

/** Labels of `by (...)`, `without (...)`, `on (...)`, `ignoring (...)` clauses. */
const groupingLabels = (expr: string): string[] =>
  [...expr.matchAll(GROUPING)].flatMap((m) => (m[1] ?? '').split(',').map((l) => l.trim()));

/** Words left once selectors, groupings, ranges, strings and PromQL words are taken out: should be none. */
function strayWords(expr: string): string[] {
  const rest = expr
    .replace(SELECTOR, ' ')
    .replace(GROUPING, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ');
  return [...rest.matchAll(/[a-zA-Z_:$][a-zA-Z0-9_:]*/g)]
    .map((m) => m[0])
    .filter((w) => !PROMQL_WORDS.has(w) && !TARGET_LABELS.has(w) && !w.startsWith('$'));
}

/** Problems of one query against the exported series; empty when every part of it is real. */
export function queryProblems(exported: Exported, expr: string): string[] {
  const found = selectors(expr);
  const problems = found.length === 0 ? ['selects no series'] : [];
  problems.push(...strayWords(expr).map((w) => `"${w}" is neither a selected series nor a PromQL word`));
  const ownLabels = new Set(found.flatMap((s) => [...(exported.get(s.metric)?.keys() ?? [])]));
  for (const label of groupingLabels(expr)) {
    if (!TARGET_LABELS.has(label) && !ownLabels.has(label))
      problems.push(`no selected series has label ${label}`);
  }
  for (const { metric, matchers } of found) {
    if (metric in EXTERNAL_METRICS) continue;
    const labels = exported.get(metric);
    if (labels === undefined) {
      problems.push(`${metric} is not exported`);
      continue;
    }
    for (const { label, op, value } of matchers) {
      if (TARGET_LABELS.has(label)) continue;
      const values = labels.get(label);
      if (values === undefined) {
        problems.push(`${metric} has no label ${label}`);
        continue;
      }
      // Equality and plain alternations name values: each must be one the service exports.
      if ((op === '=' || op === '=~') && /^[\w|]+$/.test(value)) {
        for (const v of value.split('|')) {
          if (!values.has(v)) problems.push(`${metric}{${label}="${v}"} is not exported`);
        }
      }
    }
  }
  return problems;
}
