// What `lookup` does at install and upgrade, against a fake API server (helm template --dry-run=server):
// the generated BuildKit TLS Secret is reused as is, re-signed by the kept CA for a new replica count,
// and a team's existing Secret lacking one of its keys (the chart's BuildKit's five, or the service's
// three for a BuildKit of the team's) is refused before anything is applied.
import test from 'ava';
import { X509Certificate } from 'node:crypto';
import { startFakeKubeApi } from '../../helpers/chart/fake-kube-api.js';
import { parseRendered, templateInCluster, type K8sObject, type Rendered } from '../../helpers/chart/helm.js';

const SECRET = 'ibs-image-build-service-buildkit-tls';

const generated = (r: Rendered): K8sObject => {
  const secret = r.objects.find((o) => o.kind === 'Secret' && o.metadata.name === SECRET);
  if (secret === undefined) throw new Error('no generated Secret');
  return secret;
};
const data = (secret: K8sObject): Record<string, string> => secret.data as Record<string, string>;
const pem = (secret: K8sObject, key: string): string =>
  Buffer.from(data(secret)[key] ?? '', 'base64').toString();
const stsChecksum = (r: Rendered): string | undefined =>
  (r.one('StatefulSet').spec as { template: { metadata: { annotations: Record<string, string> } } }).template
    .metadata.annotations['checksum/buildkit-tls'];

/** Renders against a cluster holding the given Secrets; returns helm's result and the objects GET'd. */
async function inCluster(
  secrets: Parameters<typeof startFakeKubeApi>[0],
  set: Record<string, unknown> = {},
): Promise<{ result: Awaited<ReturnType<typeof templateInCluster>>; gets: string[] }> {
  const api = await startFakeKubeApi(secrets);
  try {
    return { result: await templateInCluster(api.kubeconfig, [], set), gets: api.gets };
  } finally {
    await api.close();
  }
}

/** The Secret as the first install left it in the cluster. */
const asStored = (secret: K8sObject): Parameters<typeof startFakeKubeApi>[0][number] => ({
  name: secret.metadata.name,
  data: data(secret),
  annotations: secret.metadata.annotations,
  owned: true,
});

test('install generates the Secret; an upgrade reads it back and renders the same material', async (t) => {
  const first = await inCluster([]);
  t.true(first.gets.includes(`/api/v1/namespaces/builds/secrets/${SECRET}`), 'lookup asked the cluster');
  const installed = parseRendered(first.result);
  const upgrade = parseRendered((await inCluster([asStored(generated(installed))])).result);
  t.deepEqual(data(generated(upgrade)), data(generated(installed)));
  // Same certificates, same checksum: an upgrade does not restart the daemons.
  t.is(stsChecksum(upgrade), stsChecksum(installed));
});

test('an upgrade to more replicas keeps the CA and the client pair and re-signs the server certificate', async (t) => {
  const installed = generated(parseRendered((await inCluster([])).result));
  const upgrade = parseRendered((await inCluster([asStored(installed)], { 'buildkit.replicas': 3 })).result);
  const after = generated(upgrade);
  for (const key of ['ca.crt', 'ca.key', 'client.crt', 'client.key'])
    t.is(data(after)[key], data(installed)[key], key);
  t.not(data(after)['tls.crt'], data(installed)['tls.crt']);
  const server = new X509Certificate(pem(after, 'tls.crt'));
  t.true(server.checkIssued(new X509Certificate(pem(installed, 'ca.crt'))));
  t.true(
    server.subjectAltName?.includes(
      'DNS:ibs-image-build-service-buildkit-2.ibs-image-build-service-buildkit,',
    ),
  );
});

const TEAM_SECRET = 'buildkit-certs';
const key = (name: string): string => Buffer.from(`not a real ${name}`).toString('base64');

test('an existing Secret lacking the client pair is refused, naming what it lacks', async (t) => {
  const { result, gets } = await inCluster(
    [{ name: TEAM_SECRET, data: { 'ca.crt': key('ca'), 'tls.crt': key('cert'), 'tls.key': key('key') } }],
    { 'buildkit.tls.existingSecret': TEAM_SECRET },
  );
  t.true(gets.includes(`/api/v1/namespaces/builds/secrets/${TEAM_SECRET}`));
  t.not(result.exitCode, 0);
  t.is(result.stdout, '');
  t.regex(result.stderr, /buildkit\.tls\.existingSecret buildkit-certs lacks client\.crt, client\.key/);
});

test('a complete existing Secret is mounted, and the chart generates none', async (t) => {
  const complete = Object.fromEntries(
    ['ca.crt', 'tls.crt', 'tls.key', 'client.crt', 'client.key'].map((k) => [k, key(k)]),
  );
  const r = parseRendered(
    (await inCluster([{ name: TEAM_SECRET, data: complete }], { 'buildkit.tls.existingSecret': TEAM_SECRET }))
      .result,
  );
  t.is(
    r.objects.find((o) => o.kind === 'Secret' && o.metadata.name === SECRET),
    undefined,
  );
  t.truthy(r.one('StatefulSet'));
});

test('a BuildKit of the team: an existing builder.tls Secret lacking the key is refused', async (t) => {
  const { result } = await inCluster(
    [{ name: 'buildkit-client', data: { 'ca.crt': key('ca'), 'tls.crt': key('cert') } }],
    {
      'buildkit.enabled': false,
      'builder.endpoint': 'tcp://b:1234',
      'builder.tls.existingSecret': 'buildkit-client',
    },
  );
  t.not(result.exitCode, 0);
  t.regex(result.stderr, /builder\.tls\.existingSecret buildkit-client lacks tls\.key/);
});
