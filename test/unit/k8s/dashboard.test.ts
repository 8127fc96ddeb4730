// The optional Grafana dashboard as Helm renders it: a ConfigMap the Grafana sidecar picks up, with
// its panels (builds, durations, busy answers, capacity, registry results, builders, and a row
// of usage per tenant), every
// query reading only series the running service exports (the same check as the alert rules).
import test from 'ava';
import {
  queryProblems,
  scrapeExported,
  selectors,
  type Exported,
} from '../../helpers/chart/exported-metrics.js';
import { render, valuesPath, type K8sObject } from '../../helpers/chart/helm.js';

interface Target {
  expr: string;
  legendFormat: string;
}
interface Panel {
  type: string;
  title: string;
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query: string;
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

let exported: Exported;
let configMap: K8sObject;
let dashboard: Dashboard;
test.before(async () => {
  exported = await scrapeExported();
  const rendered = await render([valuesPath('valid', 'monitoring.yaml')]);
  configMap = rendered.find('ConfigMap', '-grafana-dashboard') as K8sObject;
  const data = configMap.data as Record<string, string>;
  dashboard = JSON.parse(data['image-build-service.json'] ?? '') as Dashboard;
});

test('off by default', async (t) => {
  t.is((await render()).find('ConfigMap', '-grafana-dashboard'), undefined);
});

test('the ConfigMap carries the sidecar label, the extra labels and the annotations of the values', (t) => {
  t.like(configMap.metadata.labels, { grafana_dashboard: '1', team: 'platform' });
  t.deepEqual(configMap.metadata.annotations, { grafana_folder: 'Platform' });
  t.deepEqual(Object.keys(configMap.data as object), ['image-build-service.json']);
});

test('a value in grafanaDashboard.labels overrides the sidecar label value', async (t) => {
  const rendered = await render([], {
    'metrics.grafanaDashboard': { enabled: true, labels: { grafana_dashboard: 'builds' }, annotations: {} },
  });
  t.is(rendered.find('ConfigMap', '-grafana-dashboard')?.metadata.labels?.grafana_dashboard, 'builds');
});

test('the dashboard has its panels, each with queries', (t) => {
  t.is(dashboard.uid, 'image-build-service');
  t.deepEqual(
    dashboard.panels.map((p) => p.title),
    [
      'Builds by status',
      'Build duration quantiles',
      'Busy answers',
      'In-flight builds against capacity',
      'Registry endpoint results',
      'Builders',
      'Usage per tenant',
      'Run minutes per tenant',
      'Saved minutes per tenant',
      'Builds per tenant by outcome',
      'Monthly budget used',
    ],
  );
  // A row groups the panels below it and has no query of its own.
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row'))
    t.true((panel.targets ?? []).length > 0, panel.title);
});

test('every panel query reads only series and label values the service exports', (t) => {
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      t.deepEqual(queryProblems(exported, target.expr), [], `${panel.title}: ${target.expr}`);
    }
  }
});

test('every variable query reads only series the service exports', (t) => {
  const queries = dashboard.templating.list.filter((v) => v.type === 'query');
  t.deepEqual(
    queries.map((v) => v.name),
    ['namespace', 'job'],
  );
  for (const v of queries) t.deepEqual(queryProblems(exported, v.query), [], `${v.name}: ${v.query}`);
});

test('every panel query is scoped to the chosen namespace and job', (t) => {
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      for (const { metric, matchers } of selectors(target.expr)) {
        t.like(
          Object.fromEntries(matchers.map((m) => [m.label, `${m.op}${m.value}`])),
          { namespace: '=$namespace', job: '=$job' },
          `${panel.title}: ${metric}`,
        );
      }
    }
  }
});

test('each panel reads the series it is about', (t) => {
  const read = (title: string): string[] => [
    ...new Set(
      dashboard.panels
        .find((p) => p.title === title)
        ?.targets?.flatMap((target) => selectors(target.expr).map((s) => s.metric)),
    ),
  ];
  const exprs = (title: string): string =>
    dashboard.panels
      .find((p) => p.title === title)
      ?.targets?.map((target) => target.expr)
      .join('\n') ?? '';
  t.deepEqual(read('Builds by status'), ['service_builds_total']);
  t.regex(exprs('Builds by status'), /sum by \(status\)/);
  t.deepEqual(read('Build duration quantiles'), ['service_build_duration_seconds_bucket']);
  t.deepEqual(
    [...exprs('Build duration quantiles').matchAll(/histogram_quantile\(([0-9.]+),/g)].map((m) => m[1]),
    ['0.5', '0.9', '0.99'],
  );
  t.deepEqual(read('Busy answers'), ['service_builds_total']);
  t.regex(exprs('Busy answers'), /status="busy"/);
  t.deepEqual(read('In-flight builds against capacity'), [
    'service_builds_in_flight',
    'service_builds_capacity',
  ]);
  t.deepEqual(read('Builders'), [
    'service_builder_up',
    'service_builder_builds_in_flight',
    'service_builder_builds_total',
  ]);
  t.regex(exprs('Builders'), /sum by \(builder, status\)/);
  t.deepEqual(read('Registry endpoint results'), [
    'service_image_checks_total',
    'service_image_deletes_total',
    'service_devcontainer_lookups_total',
  ]);
});
