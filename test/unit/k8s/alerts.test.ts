// The PrometheusRule as Helm renders it: its alert expressions select only series (and label values)
// that a real running service exports, scraped from its /metrics; the one external series is named.
import test from 'ava';
import {
  queryProblems,
  scrapeExported,
  selectors,
  type Exported,
} from '../../helpers/chart/exported-metrics.js';
import { NAMESPACE, RELEASE, render } from '../../helpers/chart/helm.js';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
}

let exported: Exported;
let rules: Rule[];
test.before(async () => {
  exported = await scrapeExported();
  const rendered = await render([], { 'metrics.prometheusRule.enabled': true });
  const spec = rendered.one('PrometheusRule').spec as { groups: { rules: Rule[] }[] };
  rules = spec.groups.flatMap((g) => g.rules);
});

test('the rule has the service alerts and the builder alert', (t) => {
  t.deepEqual(rules.map((r) => r.alert).sort(), [
    'ImageBuildServiceAtCapacity',
    'ImageBuildServiceBuilderDown',
    'ImageBuildServiceBusy',
    'ImageBuildServiceFailureRatioHigh',
    'ImageBuildServiceNotReady',
    'ImageBuildServiceQueueFull',
    'ImageBuildServiceQueueWaitLong',
    'ImageBuildServiceTenantBudgetReached',
  ]);
});

test('every alert reads only series the service exports (or named as external)', (t) => {
  for (const rule of rules)
    t.deepEqual(queryProblems(exported, rule.expr), [], `${rule.alert}: ${rule.expr}`);
});

test('the service series of every alert are scoped to this release', (t) => {
  for (const rule of rules) {
    for (const { metric, matchers } of selectors(rule.expr)) {
      const scope = matchers.filter((m) => m.label === 'namespace' || m.label === 'job' || m.label === 'pod');
      t.true(
        scope.some((m) => m.label === 'namespace' && m.value === NAMESPACE),
        `${rule.alert}: ${metric} not scoped to the namespace`,
      );
      t.true(
        scope.some((m) => m.value.startsWith(`${RELEASE}-image-build-service`)),
        `${rule.alert}: ${metric} not scoped to the release`,
      );
    }
  }
});

test('the build alerts read the series they are about, with the values from values.yaml', (t) => {
  const byName = Object.fromEntries(rules.map((r) => [r.alert, r]));
  const metrics = (name: string): string[] => [
    ...new Set(selectors(byName[name]?.expr ?? '').map((s) => s.metric)),
  ];
  t.deepEqual(metrics('ImageBuildServiceBusy'), ['service_builds_total']);
  t.regex(byName.ImageBuildServiceBusy?.expr ?? '', /status="busy"\}\[10m\]\)\) > 0\.05$/);
  t.deepEqual(metrics('ImageBuildServiceFailureRatioHigh'), ['service_builds_total']);
  t.regex(byName.ImageBuildServiceFailureRatioHigh?.expr ?? '', /> 0\.5\s*$/);
  t.deepEqual(metrics('ImageBuildServiceAtCapacity'), [
    'service_builds_in_flight',
    'service_builds_capacity',
  ]);
  t.is(byName.ImageBuildServiceAtCapacity?.for, '30m');
  t.deepEqual(metrics('ImageBuildServiceNotReady'), ['kube_pod_status_ready']);
  // Down for every replica (max over them is 0) for builderDownFor, per builder.
  t.deepEqual(metrics('ImageBuildServiceBuilderDown'), ['service_builder_up']);
  t.regex(
    byName.ImageBuildServiceBuilderDown?.expr ?? '',
    /^max by \(builder\) \(service_builder_up\{[^}]*\}\) == 0$/,
  );
  t.is(byName.ImageBuildServiceBuilderDown?.for, '5m');
  t.is(byName.ImageBuildServiceNotReady?.labels.severity, 'critical');
  t.deepEqual(metrics('ImageBuildServiceQueueFull'), ['service_build_queue_depth']);
  t.regex(byName.ImageBuildServiceQueueFull?.expr ?? '', />= 200\s*$/);
  t.is(byName.ImageBuildServiceQueueFull?.for, '10m');
  t.deepEqual(metrics('ImageBuildServiceQueueWaitLong'), ['service_build_queue_wait_seconds_bucket']);
  t.regex(byName.ImageBuildServiceQueueWaitLong?.expr ?? '', /> 600\s*$/);
});

test('the check refuses a misspelt series, an unknown label value and a bare series name', (t) => {
  t.deepEqual(queryProblems(exported, 'sum(service_build_total{job="x"})'), [
    'service_build_total is not exported',
  ]);
  t.deepEqual(queryProblems(exported, 'sum(service_builds_total{status="busyy"})'), [
    'service_builds_total{status="busyy"} is not exported',
  ]);
  t.deepEqual(queryProblems(exported, 'sum by (result) (service_builds_total{status="busy"})'), [
    'no selected series has label result',
  ]);
  t.deepEqual(queryProblems(exported, 'sum(rate(service_builds_total[5m]))'), [
    'selects no series',
    '"service_builds_total" is neither a selected series nor a PromQL word',
  ]);
});
