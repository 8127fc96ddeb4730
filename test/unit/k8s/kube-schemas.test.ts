// No API server runs here, so every document the chart renders (the defaults, every option on, a
// BuildKit of the team's, an older cluster) is checked against Kubernetes' own schemas and the
// rules only an API server or a controller would apply: unknown fields, names, CIDRs, and selectors
// that must select the chart's pods. Each kind of mistake is planted into a rendered document to
// show the check reports it, where it is.
import test from 'ava';
import { join } from 'node:path';
import { VALUES_DIR } from '../../helpers/chart/chart.js';
import { render, valuesPath, type K8sObject } from '../../helpers/chart/helm.js';
import { validateDocuments, type Issue, type IssueKind } from '../../helpers/chart/kube-validate.js';

const EVERYTHING_ON = join(VALUES_DIR, 'kube', 'everything-on.yaml');
const defaults = render();

const renderings: [string, Promise<{ objects: K8sObject[] }>][] = [
  ['the defaults', defaults],
  ['every option on', render([EVERYTHING_ON])],
  ["a BuildKit of the team's (full.yaml)", render([valuesPath('valid', 'full.yaml')])],
  ['every option on, Kubernetes 1.29', render([EVERYTHING_ON], {}, ['--kube-version', '1.29.0'])],
];

for (const [name, rendering] of renderings) {
  test(`${name}: every document is valid Kubernetes`, async (t) => {
    const { objects } = await rendering;
    t.true(objects.length > 0);
    t.deepEqual(validateDocuments(objects), []);
  });
}

test('every option on renders every kind the chart has', async (t) => {
  const kinds = new Set((await render([EVERYTHING_ON])).objects.map((o) => `${o.apiVersion} ${o.kind}`));
  t.deepEqual([...kinds].sort(), [
    'apps/v1 Deployment',
    'apps/v1 StatefulSet',
    'cert-manager.io/v1 Certificate',
    'monitoring.coreos.com/v1 PrometheusRule',
    'monitoring.coreos.com/v1 ServiceMonitor',
    'networking.k8s.io/v1 Ingress',
    'networking.k8s.io/v1 NetworkPolicy',
    'policy/v1 PodDisruptionBudget',
    'v1 ConfigMap',
    'v1 Secret',
    'v1 Service',
  ]);
});

type Json = Record<string, unknown>;
/** The default documents, copied, with one changed by `plant`. */
async function planted(kind: string, nameSuffix: string, plant: (o: Json) => void): Promise<Issue[]> {
  const objects = structuredClone((await defaults).objects);
  const target = objects.find((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
  if (target === undefined) throw new Error(`no ${kind} *${nameSuffix}`);
  plant(target as unknown as Json);
  return validateDocuments(objects);
}
const containerOf = (deployment: Json): Json =>
  ((((deployment.spec as Json).template as Json).spec as Json).containers as Json[])[0] as Json;
const CONTAINER = '/spec/template/spec/containers/0';
const DEPLOYMENT = 'Deployment/ibs-image-build-service';

/** The issues are exactly one, of this kind, at this path, saying this. */
function reports(issues: Issue[], document: string, kind: IssueKind, path: string, message: RegExp): string {
  const found = issues.filter((i) => i.document === document && i.kind === kind && i.path === path);
  if (found.length === 0) return `not reported: ${JSON.stringify(issues)}`;
  if (!found.some((i) => message.test(i.message))) return `other message: ${JSON.stringify(found)}`;
  const elsewhere = issues.filter((i) => i.document !== document);
  return elsewhere.length === 0 ? 'ok' : `reported elsewhere too: ${JSON.stringify(elsewhere)}`;
}

test('a wrong enum value is reported', async (t) => {
  const issues = await planted('Deployment', '-image-build-service', (d) => {
    containerOf(d).imagePullPolicy = 'Sometimes';
  });
  t.is(
    reports(issues, DEPLOYMENT, 'schema', `${CONTAINER}/imagePullPolicy`, /^enum: .*Always.*IfNotPresent/),
    'ok',
  );
});

test('a value of the wrong type is reported', async (t) => {
  const issues = await planted('Deployment', '-image-build-service', (d) => {
    (d.spec as Json).replicas = '1';
  });
  t.is(reports(issues, DEPLOYMENT, 'schema', '/spec/replicas', /^type: must be integer/), 'ok');
});

test('a missing required field is reported', async (t) => {
  const issues = await planted('Service', '-image-build-service', (s) => {
    delete ((s.spec as Json).ports as Json[])[0]?.port;
  });
  t.is(
    reports(
      issues,
      'Service/ibs-image-build-service',
      'schema',
      '/spec/ports/0',
      /^required: .*"missingProperty":"port"/,
    ),
    'ok',
  );
});

test('a malformed quantity is reported', async (t) => {
  const issues = await planted('Deployment', '-image-build-service', (d) => {
    ((containerOf(d).resources as Json).limits as Json).memory = '1 GiB';
  });
  t.is(reports(issues, DEPLOYMENT, 'schema', `${CONTAINER}/resources/limits/memory`, /quantity|oneOf/), 'ok');
});

test('a field Kubernetes does not know is reported (a misspelt probe)', async (t) => {
  const issues = await planted('Deployment', '-image-build-service', (d) => {
    const c = containerOf(d);
    c.readynessProbe = c.readinessProbe;
    delete c.readinessProbe;
  });
  t.is(reports(issues, DEPLOYMENT, 'unknown-field', `${CONTAINER}/readynessProbe`, /unknown field/), 'ok');
});

test('a name that is no DNS-1123 name is reported', async (t) => {
  const issues = await planted('ConfigMap', '-settings', (m) => {
    (m.metadata as Json).name = 'ibs_settings';
  });
  t.is(reports(issues, 'ConfigMap/ibs_settings', 'name', '/metadata/name', /DNS-1123 subdomain/), 'ok');
});

test('a malformed CIDR is reported', async (t) => {
  const issues = await planted('NetworkPolicy', '-image-build-service', (p) => {
    const rule = ((p.spec as Json).ingress as Json[])[0] as Json;
    (rule.from as Json[]).push({ ipBlock: { cidr: '10.0.0.0/33' } });
  });
  t.is(
    reports(
      issues,
      'NetworkPolicy/ibs-image-build-service',
      'cidr',
      '/spec/ingress/0/from/3/ipBlock/cidr',
      /is no CIDR/,
    ),
    'ok',
  );
});

test('an excepted range outside its CIDR is reported', async (t) => {
  const issues = await planted('NetworkPolicy', '-image-build-service', (p) => {
    const rule = ((p.spec as Json).ingress as Json[])[0] as Json;
    (rule.from as Json[]).push({ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.1.0/24', '10.1.0.0/24'] } });
  });
  t.is(
    reports(
      issues,
      'NetworkPolicy/ibs-image-build-service',
      'cidr',
      '/spec/ingress/0/from/3/ipBlock/except/1',
      /is not inside/,
    ),
    'ok',
  );
});

test('a selector that matches no pod of the chart is reported', async (t) => {
  const issues = await planted('Service', '-image-build-service', (s) => {
    ((s.spec as Json).selector as Json)['app.kubernetes.io/name'] = 'image-build-servic';
  });
  t.is(
    reports(
      issues,
      'Service/ibs-image-build-service',
      'selector',
      '/spec/selector',
      /selects no pod of the chart/,
    ),
    'ok',
  );
});

test("a workload whose selector does not match its own pods' labels is reported", async (t) => {
  const issues = await planted('StatefulSet', '-buildkit', (s) => {
    const labels = (((s.spec as Json).template as Json).metadata as Json).labels as Json;
    labels['app.kubernetes.io/name'] = 'buildkitd';
  });
  const statefulSet = 'StatefulSet/ibs-image-build-service-buildkit';
  t.true(
    issues.some(
      (i) =>
        i.document === statefulSet &&
        i.kind === 'selector' &&
        i.path === '/spec/selector' &&
        /does not select the template's pod labels/.test(i.message),
    ),
    JSON.stringify(issues),
  );
  // The policy and the Service that selected those pods now select none either.
  t.true(issues.some((i) => i.document === 'NetworkPolicy/ibs-image-build-service-buildkit'));
  t.true(issues.some((i) => i.document === 'Service/ibs-image-build-service-buildkit'));
});
