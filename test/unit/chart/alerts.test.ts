// The PrometheusRule's alert expressions name only metrics (and label values) that a real running
// service exports, scraped from its /metrics; the one external series is named explicitly.
import test from 'ava';
import { startApp } from '../../helpers/app.js';
import { readChartFile } from './chart.js';

/** Series that do not come from the service, with their source. */
const EXTERNAL_METRICS: Record<string, string> = { kube_pod_status_ready: 'kube-state-metrics' };

interface Alert {
  name: string;
  expr: string;
}

/** `- alert: X` followed by `expr: ...` (one line, or a `|` block indented deeper). */
function alerts(template: string): Alert[] {
  const out: Alert[] = [];
  const lines = template.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const alert = /^\s*- alert: (\S+)/.exec(lines[i] ?? '');
    if (!alert) continue;
    const exprLine = lines.slice(i + 1).find((l) => /^\s+expr:/.test(l)) ?? '';
    const start = lines.indexOf(exprLine, i);
    let expr = exprLine.replace(/^\s+expr:\s*/, '');
    if (expr === '|') {
      const indent = (lines[start + 1] ?? '').search(/\S/);
      expr = '';
      for (let j = start + 1; j < lines.length && (lines[j] ?? '').search(/\S/) >= indent; j++) {
        expr += `${lines[j]}\n`;
      }
    }
    out.push({ name: alert[1] ?? '', expr });
  }
  return out;
}

/** Metric names in an expression: identifiers directly followed by a label selector. */
const metricNames = (expr: string): string[] =>
  [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1] ?? '');

let exported: { names: Set<string>; text: string };
test.before(async () => {
  const app = await startApp();
  try {
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const names = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1] ?? ''));
    exported = { names, text };
  } finally {
    await app.close();
  }
});

const rules = alerts(readChartFile('templates/prometheusrule.yaml'));

test('the rule has the four alerts of the design card', (t) => {
  t.deepEqual(rules.map((r) => r.name).sort(), [
    'ImageBuildServiceAtCapacity',
    'ImageBuildServiceBusy',
    'ImageBuildServiceFailureRatioHigh',
    'ImageBuildServiceNotReady',
  ]);
});

for (const rule of rules) {
  test(`${rule.name}: every metric it reads is exported by the service (or named as external)`, (t) => {
    const names = metricNames(rule.expr);
    t.true(names.length > 0, rule.expr);
    for (const name of names) {
      t.true(exported.names.has(name) || name in EXTERNAL_METRICS, `${name} is not exported (${rule.expr})`);
    }
  });
}

test('the build alerts read the service series they are about, with label values it exports', (t) => {
  const byName = Object.fromEntries(rules.map((r) => [r.name, r.expr]));
  t.deepEqual(metricNames(byName.ImageBuildServiceBusy ?? ''), ['service_builds_total']);
  t.regex(byName.ImageBuildServiceBusy ?? '', /status="busy"/);
  t.deepEqual(
    [...new Set(metricNames(byName.ImageBuildServiceFailureRatioHigh ?? ''))],
    ['service_builds_total'],
  );
  t.deepEqual(metricNames(byName.ImageBuildServiceAtCapacity ?? ''), [
    'service_builds_in_flight',
    'service_builds_capacity',
  ]);
  for (const status of ['busy', 'failure', 'success']) {
    t.true(exported.text.includes(`service_builds_total{status="${status}"}`), status);
  }
});
