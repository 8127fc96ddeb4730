// The optional Ingress as the real Helm renders it: none by default; when enabled, each host routed
// to the chart's own Service by its port name, the class, TLS and annotations of the values; and the
// install notes say which calls need the front's read timeout raised (sync) and which do not (async).
import test from 'ava';
import { helm, render, valuesPath, RELEASE, NAMESPACE, type K8sObject } from '../../helpers/chart/helm.js';
import { CHART_DIR } from '../../helpers/chart/chart.js';

interface IngressSpec {
  ingressClassName?: string;
  tls?: { secretName: string; hosts: string[] }[];
  rules: {
    host: string;
    http: {
      paths: {
        path: string;
        pathType: string;
        backend: { service: { name: string; port: { name: string } } };
      }[];
    };
  }[];
}

const specOf = (o: K8sObject): IngressSpec => o.spec as IngressSpec;
const FILE = valuesPath('valid', 'ingress.yaml');

test('off by default: no Ingress', async (t) => {
  t.is((await render()).find('Ingress'), undefined);
});

test('enabled: each host reaches the chart Service by its named port, with class, TLS and annotations', async (t) => {
  const rendered = await render([FILE]);
  const ingress = rendered.one('Ingress');
  const service = rendered.documents.find((d) => d.source === 'templates/service.yaml')?.object;
  if (service === undefined) return t.fail('no Service of the service');
  const spec = specOf(ingress);
  t.is(ingress.apiVersion, 'networking.k8s.io/v1');
  t.is(spec.ingressClassName, 'nginx');
  t.is(ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout'], '3700');
  t.deepEqual(spec.tls, [
    { secretName: 'builds-example-com-tls', hosts: ['builds.example.com', 'ci.example.com'] },
  ]);
  t.deepEqual(
    spec.rules.map((r) => [r.host, r.http.paths.map((p) => `${p.pathType} ${p.path}`)]),
    [
      ['builds.example.com', ['Prefix /']],
      ['ci.example.com', ['Prefix /builds-api']],
    ],
  );
  const ports = (service.spec as { ports: { name: string }[] }).ports.map((p) => p.name);
  for (const path of spec.rules.flatMap((r) => r.http.paths)) {
    t.is(path.backend.service.name, service.metadata.name);
    t.true(ports.includes(path.backend.service.port.name), path.backend.service.port.name);
  }
});

test('no class and no TLS given: neither is rendered (the cluster default class, plain HTTP)', async (t) => {
  const ingress = (
    await render([], {
      ingress: { enabled: true, allowAnonymous: true, hosts: [{ host: 'b.example.com' }] },
    })
  ).one('Ingress');
  const spec = specOf(ingress);
  t.false('ingressClassName' in spec);
  t.false('tls' in spec);
  t.is(ingress.metadata.annotations, undefined);
});

test('the notes: async calls need no timeout tuning; sync calls need the read timeout above the build timeout', async (t) => {
  const notes = await helm([
    'install',
    RELEASE,
    CHART_DIR,
    '--namespace',
    NAMESPACE,
    '--dry-run=client',
    '--values',
    FILE,
    '--set',
    'build.timeoutSeconds=1800',
  ]);
  t.is(notes.exitCode, 0, notes.stderr);
  const text = notes.stdout.slice(notes.stdout.indexOf('NOTES:'));
  t.regex(text, /Through the Ingress: https:\/\/builds\.example\.com, https:\/\/ci\.example\.com/);
  t.regex(text, /async builds \(`Prefer: respond-async`[^)]*\) need\s+no timeout tuning/);
  t.regex(
    text,
    /synchronous POST \/build holds its request for\s+the whole build \(build\.timeoutSeconds: 1800 s\)/,
  );
  t.regex(text, /nginx\.ingress\.kubernetes\.io\/proxy-read-timeout": "1900"/);
});
