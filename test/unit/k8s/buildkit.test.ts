// The chart-deployed BuildKit (buildkit.*) as the real Helm renders it: a rootless StatefulSet with a
// cache per pod, its headless Service, a NetworkPolicy admitting only the service's pods, and mutual
// TLS in each of its three sources. The generated certificates are parsed with node:crypto and used
// for a real mutual-TLS handshake on 127.0.0.1.
import test from 'ava';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { once } from 'node:events';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { NAMESPACE, render, valuesPath, type K8sObject, type Rendered } from '../../helpers/chart/helm.js';

const NAME = 'ibs-image-build-service-buildkit';
const HEADLESS = NAME;

interface Container {
  name: string;
  image: string;
  args: string[];
  securityContext: Record<string, unknown>;
  ports: { name: string; containerPort: number }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  resources: unknown;
  readinessProbe: { exec: { command: string[] } };
}
interface SecretVolume {
  name: string;
  secret?: { secretName: string; defaultMode: number; items: { key: string; path: string }[] };
  emptyDir?: { sizeLimit: string };
}
interface StatefulSetSpec {
  serviceName: string;
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    spec: {
      automountServiceAccountToken: boolean;
      securityContext?: Record<string, unknown>;
      containers: Container[];
      volumes: SecretVolume[];
    };
  };
  volumeClaimTemplates?: {
    metadata: { name: string };
    spec: { storageClassName?: string; resources: { requests: { storage: string } } };
  }[];
}

const sts = (r: Rendered): StatefulSetSpec => r.one('StatefulSet').spec as StatefulSetSpec;
const daemon = (r: Rendered): Container => {
  const [c, ...rest] = sts(r).template.spec.containers;
  if (c === undefined || rest.length > 0) throw new Error('not one container');
  return c;
};
const volume = (r: Rendered, name: string): SecretVolume | undefined =>
  sts(r).template.spec.volumes.find((v) => v.name === name);
const argAfter = (c: Container, flag: string): string | undefined => c.args[c.args.indexOf(flag) + 1];
const pod = (i: number): string => `${NAME}-${i}.${HEADLESS}`;
const podNames = (i: number): string[] => [
  pod(i),
  `${pod(i)}.${NAMESPACE}`,
  `${pod(i)}.${NAMESPACE}.svc`,
  `${pod(i)}.${NAMESPACE}.svc.cluster.local`,
];
const SERVER_ITEMS = [
  { key: 'ca.crt', path: 'ca.crt' },
  { key: 'tls.crt', path: 'tls.crt' },
  { key: 'tls.key', path: 'tls.key' },
];

let defaults: Rendered;
test.before(async () => {
  defaults = await render();
});

test('on by default: two rootless daemons as in moby/buildkit statefulset.rootless.yaml', (t) => {
  const spec = sts(defaults);
  t.is(spec.replicas, 2);
  t.false(spec.template.spec.automountServiceAccountToken);
  const c = daemon(defaults);
  t.is(c.image, 'moby/buildkit:v0.23.2-rootless');
  t.true(c.args.includes('--oci-worker-no-process-sandbox'));
  // Not root, not privileged, no added capability: only the example's unconfined seccomp and AppArmor.
  t.deepEqual(c.securityContext, {
    runAsNonRoot: true,
    runAsUser: 1000,
    runAsGroup: 1000,
    seccompProfile: { type: 'Unconfined' },
    appArmorProfile: { type: 'Unconfined' },
  });
  t.deepEqual(spec.template.spec.securityContext, { fsGroup: 1000 });
  t.deepEqual(c.resources, {
    requests: { cpu: '500m', memory: '1Gi' },
    limits: { cpu: '2', memory: '4Gi' },
  });
});

test('before Kubernetes 1.30 AppArmor is set by the annotation the example uses', async (t) => {
  const r = await render([], {}, ['--kube-version', '1.29.0']);
  t.is(
    sts(r).template.metadata.annotations['container.apparmor.security.beta.kubernetes.io/buildkitd'],
    'unconfined',
  );
  t.false('appArmorProfile' in daemon(r).securityContext);
  t.is(
    defaults.documents.some((d) => d.text.includes('container.apparmor.security.beta.kubernetes.io')),
    false,
  );
});

test('buildkitd listens on TCP only with a CA (client certificates required) and the server pair', (t) => {
  const c = daemon(defaults);
  t.deepEqual(
    c.args.filter((_, i) => c.args[i - 1] === '--addr'),
    ['unix:///run/user/1000/buildkit/buildkitd.sock', 'tcp://0.0.0.0:1234'],
  );
  const tls = c.volumeMounts.find((m) => m.name === 'tls');
  t.deepEqual(tls, { name: 'tls', mountPath: '/etc/buildkit/tls', readOnly: true });
  for (const [flag, file] of [
    ['--tlscacert', 'ca.crt'],
    ['--tlscert', 'tls.crt'],
    ['--tlskey', 'tls.key'],
  ] as const)
    t.is(argAfter(c, flag), `/etc/buildkit/tls/${file}`, flag);
  // The server's pair and the CA only: not the client key, not the generated CA's key.
  t.deepEqual(volume(defaults, 'tls')?.secret, {
    secretName: `${NAME}-tls`,
    defaultMode: 0o440,
    items: SERVER_ITEMS,
  });
  // The probes ask the pod-local unix socket, the one listener without TLS.
  t.deepEqual(c.readinessProbe.exec.command, [
    'buildctl',
    '--addr',
    'unix:///run/user/1000/buildkit/buildkitd.sock',
    'debug',
    'workers',
  ]);
});

test('each daemon has its own cache: a PersistentVolumeClaim of buildkit.cache.size by default', (t) => {
  const claims = sts(defaults).volumeClaimTemplates ?? [];
  t.deepEqual(
    claims.map((c) => [c.metadata.name, c.spec.resources.requests.storage, c.spec.storageClassName]),
    [['cache', '50Gi', undefined]],
  );
  t.deepEqual(
    daemon(defaults).volumeMounts.find((m) => m.name === 'cache'),
    { name: 'cache', mountPath: '/home/user/.local/share/buildkit' },
  );
  t.is(volume(defaults, 'cache'), undefined);
});

test('or an emptyDir with a size limit', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-existing-secret.yaml')]);
  t.is(sts(r).volumeClaimTemplates, undefined);
  t.deepEqual(volume(r, 'cache')?.emptyDir, { sizeLimit: '10Gi' });
});

test('the headless Service names each pod; the service and the builders select only their own pods', (t) => {
  const headless = defaults.find('Service', '-buildkit') as K8sObject;
  const spec = headless.spec as {
    clusterIP: string;
    selector: Record<string, string>;
    ports: { port: number; targetPort: string }[];
  };
  t.is(headless.metadata.name, HEADLESS);
  t.is(sts(defaults).serviceName, HEADLESS);
  t.is(spec.clusterIP, 'None');
  t.deepEqual(
    spec.ports.map((p) => [p.port, p.targetPort]),
    [[1234, 'buildkit']],
  );
  t.like(sts(defaults).template.metadata.labels, spec.selector);
  const service = defaults.find('Service', '-image-build-service') as K8sObject;
  const serviceSelector = (service.spec as { selector: Record<string, string> }).selector;
  const deploymentLabels = (
    defaults.one('Deployment').spec as { template: { metadata: { labels: Record<string, string> } } }
  ).template.metadata.labels;
  const selects = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);
  t.false(selects(serviceSelector, sts(defaults).template.metadata.labels));
  t.false(selects(spec.selector, deploymentLabels));
});

test('the NetworkPolicy admits only the service pods, and only to the BuildKit port', (t) => {
  const policy = (defaults.find('NetworkPolicy', '-buildkit') as K8sObject).spec as {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { from: { podSelector: { matchLabels: Record<string, string> } }[]; ports: unknown[] }[];
  };
  t.deepEqual(policy.podSelector.matchLabels, sts(defaults).selector.matchLabels);
  t.deepEqual(policy.policyTypes, ['Ingress']);
  const deployment = defaults.one('Deployment').spec as { selector: { matchLabels: Record<string, string> } };
  t.deepEqual(policy.ingress, [
    {
      from: [{ podSelector: { matchLabels: deployment.selector.matchLabels } }],
      ports: [{ port: 1234, protocol: 'TCP' }],
    },
  ]);
});

/** The generated Secret's PEM files. */
function generatedFiles(r: Rendered): Map<string, string> {
  const secret = r.find('Secret', '-buildkit-tls');
  if (secret === undefined) throw new Error('no generated TLS Secret');
  const data = secret.data as Record<string, string>;
  return new Map(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}
const file = (files: Map<string, string>, key: string): string => {
  const value = files.get(key);
  if (value === undefined) throw new Error(`no ${key}`);
  return value;
};

test('the default install generates a CA, a server certificate naming every pod and a client pair', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-replicas-3.yaml')]);
  const files = generatedFiles(r);
  t.deepEqual([...files.keys()].sort(), [
    'ca.crt',
    'ca.key',
    'client.crt',
    'client.key',
    'tls.crt',
    'tls.key',
  ]);
  const ca = new X509Certificate(file(files, 'ca.crt'));
  const server = new X509Certificate(file(files, 'tls.crt'));
  const client = new X509Certificate(file(files, 'client.crt'));
  t.true(ca.ca);
  for (const cert of [server, client]) {
    t.true(cert.checkIssued(ca));
    t.true(cert.verify(ca.publicKey));
  }
  const names = (server.subjectAltName ?? '').split(', ').map((n) => n.replace(/^DNS:/, ''));
  t.deepEqual(names.sort(), [0, 1, 2].flatMap(podNames).sort());
  t.true(server.checkPrivateKey(createPrivateKey(file(files, 'tls.key'))));
  t.true(client.checkPrivateKey(createPrivateKey(file(files, 'client.key'))));
  t.is(sts(r).replicas, 3);
});

/** One mutual-TLS handshake on 127.0.0.1: the server requires a client certificate from its CA. */
async function handshake(
  server: { ca: string; cert: string; key: string },
  client: { ca: string; cert?: string; key?: string; servername: string },
): Promise<string | undefined> {
  const listener = createServer({ ...server, requestCert: true, rejectUnauthorized: true }, (s) =>
    s.end('ok'),
  );
  listener.on('tlsClientError', () => undefined);
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as { port: number };
  try {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, ...client });
    return await new Promise<string | undefined>((resolve) => {
      let data = '';
      socket.on('data', (d: Buffer) => (data += d.toString()));
      socket.on('end', () => resolve(data === 'ok' ? undefined : 'closed without an answer'));
      socket.on('error', (e) => resolve(e.message));
    });
  } finally {
    listener.close();
  }
}

test('the generated pairs complete a mutual-TLS handshake under each pod name, and only with the client pair', async (t) => {
  const files = generatedFiles(defaults);
  const server = { ca: file(files, 'ca.crt'), cert: file(files, 'tls.crt'), key: file(files, 'tls.key') };
  const client = {
    ca: file(files, 'ca.crt'),
    cert: file(files, 'client.crt'),
    key: file(files, 'client.key'),
  };
  for (const servername of [pod(0), pod(1)])
    t.is(await handshake(server, { ...client, servername }), undefined);
  // A name the certificate does not hold fails the client's check; no client certificate, the server's.
  t.regex((await handshake(server, { ...client, servername: `${NAME}-2.${HEADLESS}` })) ?? '', /altnames/i);
  t.truthy(await handshake(server, { ca: client.ca, servername: pod(0) }));
});

test('every render without a cluster generates new material (lookup finds no Secret to reuse)', async (t) => {
  const again = generatedFiles(await render());
  t.not(file(again, 'ca.crt'), file(generatedFiles(defaults), 'ca.crt'));
});

test('cert-manager: Certificates for every pod name and for the service, no generated Secret', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-cert-manager.yaml')]);
  const certs = r.objects.filter((o) => o.kind === 'Certificate');
  t.deepEqual(
    certs.map((c) => [c.apiVersion, c.metadata.name]),
    [
      ['cert-manager.io/v1', `${NAME}-server`],
      ['cert-manager.io/v1', `${NAME}-client`],
    ],
  );
  const [server, client] = certs.map(
    (c) => c.spec as { secretName: string; dnsNames?: string[]; usages: string[]; issuerRef: unknown },
  );
  const issuerRef = { name: 'platform-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' };
  t.deepEqual(server?.issuerRef, issuerRef);
  t.deepEqual(client?.issuerRef, issuerRef);
  t.deepEqual(server?.dnsNames, [0, 1].flatMap(podNames));
  t.true(server?.usages.includes('server auth'));
  t.true(client?.usages.includes('client auth'));
  t.is(client?.dnsNames, undefined);
  t.is(r.find('Secret', '-buildkit-tls'), undefined);
  t.deepEqual(volume(r, 'tls')?.secret?.secretName, server?.secretName);
  t.deepEqual(volume(r, 'tls')?.secret?.items, SERVER_ITEMS);
});

test('existingSecret: the daemons mount the team Secret and the chart generates none', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-existing-secret.yaml')]);
  t.is(r.find('Secret', '-buildkit-tls'), undefined);
  t.is(r.find('Certificate'), undefined);
  t.deepEqual(volume(r, 'tls')?.secret, {
    secretName: 'buildkit-certs',
    defaultMode: 0o440,
    items: SERVER_ITEMS,
  });
});

test('rootless=false runs the privileged image as the example does, with its own paths', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-privileged.yaml')]);
  const c = daemon(r);
  t.is(c.image, 'moby/buildkit:v0.23.2');
  t.deepEqual(c.securityContext, { privileged: true });
  t.false(c.args.includes('--oci-worker-no-process-sandbox'));
  t.is(c.volumeMounts.find((m) => m.name === 'cache')?.mountPath, '/var/lib/buildkit');
  t.is(c.args[1], 'unix:///run/buildkit/buildkitd.sock');
  t.is(sts(r).volumeClaimTemplates?.[0]?.spec.storageClassName, 'fast-ssd');
});

test('buildkit.enabled=false renders no BuildKit object', async (t) => {
  const r = await render([valuesPath('valid', 'minimal.yaml')]);
  t.deepEqual(
    r.objects.filter((o) => o.metadata.name.includes('buildkit')).map((o) => o.kind),
    [],
  );
});

/** The service container's env and its builder-tls volume. */
function serviceSide(r: Rendered): {
  env: Map<string, string | undefined>;
  tls: SecretVolume | undefined;
  mount: unknown;
} {
  const spec = r.one('Deployment').spec as {
    template: {
      spec: {
        containers: { env: { name: string; value?: string }[]; volumeMounts: { name: string }[] }[];
        volumes: SecretVolume[];
      };
    };
  };
  const [c] = spec.template.spec.containers;
  return {
    env: new Map((c?.env ?? []).map((e) => [e.name, e.value])),
    tls: spec.template.spec.volumes.find((v) => v.name === 'builder-tls'),
    mount: c?.volumeMounts.find((m) => m.name === 'builder-tls'),
  };
}
const CLIENT_ENV = [
  ['BUILDER_TLS_CA_PATH', '/etc/image-build-service/builder-tls/ca.crt'],
  ['BUILDER_TLS_CERT_PATH', '/etc/image-build-service/builder-tls/tls.crt'],
  ['BUILDER_TLS_KEY_PATH', '/etc/image-build-service/builder-tls/tls.key'],
] as const;

test('the service gets every daemon as its endpoint list, following buildkit.replicas', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-replicas-3.yaml')]);
  t.is(serviceSide(r).env.get('BUILDER_ENDPOINT'), [0, 1, 2].map((i) => `tcp://${pod(i)}:1234`).join(','));
  t.is(serviceSide(defaults).env.get('BUILDER_ENDPOINT'), `tcp://${pod(0)}:1234,tcp://${pod(1)}:1234`);
  // Each endpoint's host is a name of the server certificate: no server-name override needed.
  t.false(serviceSide(r).env.has('BUILDER_TLS_SERVER_NAME'));
});

test('the service mounts the client pair and the CA, never the server key, and names them', (t) => {
  const side = serviceSide(defaults);
  for (const [name, path] of CLIENT_ENV) t.is(side.env.get(name), path, name);
  t.deepEqual(side.mount, {
    name: 'builder-tls',
    mountPath: '/etc/image-build-service/builder-tls',
    readOnly: true,
  });
  t.deepEqual(side.tls?.secret, {
    secretName: `${NAME}-tls`,
    defaultMode: 0o440,
    items: [
      { key: 'ca.crt', path: 'ca.crt' },
      { key: 'client.crt', path: 'tls.crt' },
      { key: 'client.key', path: 'tls.key' },
    ],
  });
});

test('with cert-manager the service mounts the client Certificate Secret', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-cert-manager.yaml')]);
  t.deepEqual(serviceSide(r).tls?.secret, {
    secretName: `${NAME}-client-tls`,
    defaultMode: 0o440,
    items: SERVER_ITEMS,
  });
  for (const [name, path] of CLIENT_ENV) t.is(serviceSide(r).env.get(name), path, name);
});

test('with the team Secret the two sides take their own halves of it', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-existing-secret.yaml')]);
  const items = serviceSide(r).tls?.secret?.items.map((i) => i.key);
  t.deepEqual(items, ['ca.crt', 'client.crt', 'client.key']);
  t.deepEqual(
    volume(r, 'tls')?.secret?.items.map((i) => i.key),
    ['ca.crt', 'tls.crt', 'tls.key'],
  );
});

test('a BuildKit of the team: builder.tls PEM texts become a Secret the service mounts', async (t) => {
  const r = await render([valuesPath('valid', 'builder-tls-pem.yaml')]);
  const side = serviceSide(r);
  t.is(side.env.get('BUILDER_ENDPOINT'), undefined);
  const secret = r.find('Secret', '-builder-tls') as K8sObject;
  t.deepEqual(Object.keys(secret.data as object).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
  t.is(side.tls?.secret?.secretName, secret.metadata.name);
  for (const [name, path] of CLIENT_ENV) t.is(side.env.get(name), path, name);
  // Only a CA: the service trusts the builders and sends no client certificate.
  const caOnly = serviceSide(
    await render([valuesPath('valid', 'minimal.yaml')], {
      'builder.tls.ca': '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n',
    }),
  );
  t.deepEqual(caOnly.tls?.secret?.items, [{ key: 'ca.crt', path: 'ca.crt' }]);
  t.true(caOnly.env.has('BUILDER_TLS_CA_PATH'));
  t.false(caOnly.env.has('BUILDER_TLS_KEY_PATH'));
  // No TLS at all: no volume, no variable.
  const plain = serviceSide(await render([valuesPath('valid', 'minimal.yaml')]));
  t.is(plain.tls, undefined);
  for (const [name] of CLIENT_ENV) t.false(plain.env.has(name), name);
});

test('buildkit.pools: a StatefulSet per pool on its nodes, one TLS for all, each pod listed with its platforms', async (t) => {
  const r = await render([valuesPath('valid', 'buildkit-pools.yaml')]);
  const sets = r.objects.filter((o) => o.kind === 'StatefulSet');
  t.deepEqual(
    sets.map((o) => o.metadata.name),
    [`${NAME}-amd64`, `${NAME}-arm64`],
  );
  const [amd64, arm64] = sets.map(
    (o) => o.spec as StatefulSetSpec & { template: { spec: Record<string, unknown> } },
  );
  t.is(amd64?.replicas, 2);
  t.is(arm64?.replicas, 1);
  t.deepEqual(amd64?.template.spec.nodeSelector, { 'kubernetes.io/arch': 'amd64' });
  t.deepEqual(arm64?.template.spec.nodeSelector, { 'kubernetes.io/arch': 'arm64' });
  t.deepEqual(arm64?.template.spec.tolerations, [
    { key: 'arch', operator: 'Equal', value: 'arm64', effect: 'NoSchedule' },
  ]);
  t.deepEqual(arm64?.template.spec.containers[0]?.resources, {
    requests: { cpu: '1', memory: '2Gi' },
    limits: { cpu: '2', memory: '4Gi' },
  });
  // Each StatefulSet selects its own pods only; all share the headless Service and the server Secret.
  t.not(amd64?.selector.matchLabels['image-build-service/buildkit-pool'], undefined);
  t.notDeepEqual(amd64?.selector.matchLabels, arm64?.selector.matchLabels);
  t.deepEqual(
    sets.map((o) => (o.spec as StatefulSetSpec).serviceName),
    [HEADLESS, HEADLESS],
  );
  const secrets = sets.map(
    (o) =>
      (o.spec as StatefulSetSpec).template.spec.volumes.find((v) => v.name === 'tls')?.secret?.secretName,
  );
  t.deepEqual(secrets, [`${NAME}-tls`, `${NAME}-tls`]);
  const host = (set: string, i: number): string => `${NAME}-${set}-${i}.${HEADLESS}`;
  t.is(
    serviceSide(r).env.get('BUILDER_ENDPOINT'),
    [
      `tcp://${host('amd64', 0)}:1234=linux/amd64`,
      `tcp://${host('amd64', 1)}:1234=linux/amd64`,
      `tcp://${host('arm64', 0)}:1234=linux/arm64`,
    ].join(','),
  );
  const server = new X509Certificate(file(generatedFiles(r), 'tls.crt'));
  const names = (server.subjectAltName ?? '').split(', ').map((n) => n.replace(/^DNS:/, ''));
  for (const pod of [host('amd64', 0), host('amd64', 1), host('arm64', 0)]) t.true(names.includes(pod), pod);
});

test('without pools, buildkit.platforms declares the platforms of the one StatefulSet (its selector unchanged)', async (t) => {
  t.deepEqual(
    Object.keys(sts(defaults).selector.matchLabels).includes('image-build-service/buildkit-pool'),
    false,
  );
  const r = await render([], { 'buildkit.platforms': ['linux/amd64'] });
  t.is(
    serviceSide(r).env.get('BUILDER_ENDPOINT'),
    `tcp://${pod(0)}:1234=linux/amd64,tcp://${pod(1)}:1234=linux/amd64`,
  );
});
