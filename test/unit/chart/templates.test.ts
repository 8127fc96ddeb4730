// Helm is not installable here, so the templates are checked as text for what the contract fixes
// (uid/gid 2000, read-only root, no API token, volumes, probes, checksums) and for balanced actions.
import test from 'ava';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_DIR, readChartFile } from './chart.js';

const deployment = readChartFile('templates/deployment.yaml');

const required: [string, RegExp][] = [
  ['non-root uid/gid 2000', /runAsNonRoot: true\n\s+runAsUser: 2000\n\s+runAsGroup: 2000/],
  ['read-only root filesystem', /readOnlyRootFilesystem: true/],
  ['all capabilities dropped', /capabilities:\n\s+drop: \["ALL"\]/],
  ['no privilege escalation', /allowPrivilegeEscalation: false/],
  ['no service-account token', /automountServiceAccountToken: false/],
  ['scratch emptyDir at /tmp', /- name: scratch\n\s+mountPath: \/tmp\n/],
  [
    'scratch size from values',
    /- name: scratch\n\s+emptyDir:\n\s+sizeLimit: \{\{ \.Values\.scratch\.sizeLimit \}\}/,
  ],
  [
    'builder state emptyDir sized from values',
    /- name: builder-state\n\s+emptyDir:\n\s+sizeLimit: \{\{ \.Values\.builderState\.sizeLimit \}\}/,
  ],
  ['DOCKER_CONFIG is the builder state dir', /- name: DOCKER_CONFIG\n\s+value: \/var\/lib\/builder-state\n/],
  [
    'registry auth mounted as config.json in the builder state dir',
    /mountPath: \/var\/lib\/builder-state\/config\.json\n\s+subPath: /,
  ],
  ['startup probe route', /startupProbe:\n\s+httpGet:\n\s+path: \/health\/startup/],
  ['liveness probe route', /livenessProbe:\n\s+httpGet:\n\s+path: \/health\/live\n/],
  ['readiness probe route', /readinessProbe:\n\s+httpGet:\n\s+path: \/health\/ready\n/],
  [
    'termination grace from values',
    /terminationGracePeriodSeconds: \{\{ \.Values\.terminationGracePeriodSeconds \}\}/,
  ],
  ['replicas from values', /replicas: \{\{ \.Values\.replicas \}\}/],
];
for (const [what, pattern] of required) {
  test(`deployment: ${what}`, (t) => t.regex(deployment, pattern));
}

test('deployment: a checksum annotation for every configuration object it mounts', (t) => {
  const configObjects = readdirSync(join(CHART_DIR, 'templates')).filter((f) =>
    /^(configmap|secret)-/.test(f),
  );
  t.true(configObjects.length >= 5);
  for (const file of configObjects) {
    t.true(deployment.includes(`include (print $.Template.BasePath "/${file}") . | sha256sum`), file);
  }
});

test('every template has balanced {{ }} actions and matching if/with/range ... end', (t) => {
  for (const file of readdirSync(join(CHART_DIR, 'templates'))) {
    const text = readChartFile(join('templates', file));
    t.is(text.split('{{').length, text.split('}}').length, `${file}: unbalanced braces`);
    const opens = [...text.matchAll(/\{\{-?\s*(if|with|range|define)\b/g)].length;
    const ends = [...text.matchAll(/\{\{-?\s*end\s*-?\}\}/g)].length;
    t.is(opens, ends, `${file}: ${opens} blocks opened, ${ends} closed`);
  }
});

test('the optional monitoring objects render only when enabled', (t) => {
  t.regex(
    readChartFile('templates/servicemonitor.yaml'),
    /^\{\{- if \.Values\.metrics\.serviceMonitor\.enabled \}\}/,
  );
  t.regex(
    readChartFile('templates/prometheusrule.yaml'),
    /^\{\{- if \.Values\.metrics\.prometheusRule\.enabled \}\}/,
  );
});
