// The chart as the real Helm renders it, for the default values and every valid values file: the
// parsed objects carry what docs/operations.md fixes (uid/gid 2000, read-only root, no API token, sized
// scratch volumes, probes, checksums), and the service's own loader accepts the configuration files
// and environment the pod would see.
import test from 'ava';
import { builderEndpoints } from '../../../src/config/builder-endpoints.js';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { OPTIONS } from '../../../src/config/options.js';
import { loadConfig } from '../../../src/config/load.js';
import { parse } from 'yaml';
import {
  defaultValues,
  mergeValues,
  readChartFile,
  valuesFiles,
  type Values,
} from '../../helpers/chart/chart.js';
import { render, valuesPath, type K8sObject, type Rendered } from '../../helpers/chart/helm.js';
import { container, deploymentSpec, podView, type ExternalSecrets } from '../../helpers/chart/pod.js';
import { selfSignedCert } from '../../helpers/fake-registry.js';

interface Case {
  name: string;
  files: string[];
  values: Values;
}
const cases: Case[] = [
  { name: 'defaults', files: [], values: defaultValues() },
  ...valuesFiles('valid').map((f) => ({
    name: f.name,
    files: [valuesPath('valid', f.name)],
    values: mergeValues(defaultValues(), f.values),
  })),
];

/** The image tag when `image.tag` is empty. */
const APP_VERSION = (parse(readChartFile('Chart.yaml')) as { appVersion: string }).appVersion;

const renders = new Map<string, Promise<Rendered>>();
const rendered = (c: Case): Promise<Rendered> => {
  let r = renders.get(c.name);
  if (r === undefined) {
    r = render(c.files);
    renders.set(c.name, r);
  }
  return r;
};

/** The value at a dotted path of merged values (typed by the caller, who knows the schema). */
const at = <T = unknown>(values: Values, path: string): T =>
  path.split('.').reduce<unknown>((v, key) => (v as Values | undefined)?.[key], values) as T;

const USER_GIT_CREDENTIALS = [{ host: 'git.example.org', kind: 'https', username: 'u', token: 't' }];
const USER_EVENT_SUBSCRIPTIONS = [
  {
    name: 'user-hook',
    url: 'https://hooks.example/ibs',
    secrets: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`],
  },
];
const USER_BUILD_SECRETS = [{ id: 'npmrc', value: 'v', repositories: [{ host: 'git.example.org' }] }];
const USER_AUTH_TOKENS = [
  { name: 'platform-ops', sha256: createHash('sha256').update('user token').digest('hex') },
];
const USER_DSN = 'https://key@errors.example.org/7';
const USER_REDIS_URL = 'rediss://:user-secret@redis.example.org:6380/1';
const USER_REDIS_PASSWORD = 'user-cluster-secret';
const USER_SIGNING_PASSWORD = 'user-signing-password';
const USER_SIGNING_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({
    type: 'pkcs8',
    format: 'pem',
    cipher: 'aes-256-cbc',
    passphrase: USER_SIGNING_PASSWORD,
  })
  .toString();

const BUILDKIT = 'ibs-image-build-service-buildkit';

/** The chart's BuildKit TLS Secrets that are not the chart's: the team's, or cert-manager's client Secret. */
function addBuildkitSecrets(values: Values, secrets: ExternalSecrets): void {
  if (!at<boolean>(values, 'buildkit.enabled')) return;
  const pem = selfSignedCert();
  const existing = at<string>(values, 'buildkit.tls.existingSecret');
  if (existing !== '') {
    const pair: [string, string][] = [
      ['ca.crt', pem.cert],
      ['tls.crt', pem.cert],
      ['tls.key', pem.key],
      ['client.crt', pem.cert],
      ['client.key', pem.key],
    ];
    secrets.set(existing, new Map(pair));
  } else if (at<string>(values, 'buildkit.tls.certManager.issuerRef.name') !== '') {
    const pair: [string, string][] = [
      ['ca.crt', pem.cert],
      ['tls.crt', pem.cert],
      ['tls.key', pem.key],
    ];
    secrets.set(`${BUILDKIT}-client-tls`, new Map(pair));
  }
}

/** The endpoints the service gets: the chart's daemons by pod DNS name, or builder.endpoint. */
function expectedEndpoints(values: Values): string[] {
  if (at<boolean>(values, 'buildkit.enabled')) {
    const port = at<number>(values, 'buildkit.port');
    const pools = at<{ name: string; replicas?: number }[]>(values, 'buildkit.pools');
    if (pools.length > 0) {
      return pools.flatMap((pool) =>
        [...Array(pool.replicas ?? at<number>(values, 'buildkit.replicas')).keys()].map(
          (i) => `tcp://${BUILDKIT}-${pool.name}-${i}.${BUILDKIT}:${port}`,
        ),
      );
    }
    return [...Array(at<number>(values, 'buildkit.replicas')).keys()].map(
      (i) => `tcp://${BUILDKIT}-${i}.${BUILDKIT}:${port}`,
    );
  }
  const endpoint = at(values, 'builder.endpoint') as string | string[];
  return Array.isArray(endpoint) ? endpoint : endpoint ? [endpoint] : [];
}

/** Stand-ins for the Secrets a user keeps outside the chart (`existingSecret`), under the keys the values name. */
function userSecrets(values: Values): ExternalSecrets {
  const secrets: ExternalSecrets = new Map();
  const add = (section: string, content: string): void => {
    const name = at(values, `${section}.existingSecret`) as string;
    if (name !== '')
      secrets.set(name, new Map([[at(values, `${section}.existingSecretKey`) as string, content]]));
  };
  add('gitCredentials', JSON.stringify(USER_GIT_CREDENTIALS));
  add('buildSecrets', JSON.stringify(USER_BUILD_SECRETS));
  add('events', JSON.stringify(USER_EVENT_SUBSCRIPTIONS));
  add('registryAuth', JSON.stringify({ auths: {} }));
  add('errorTracking', USER_DSN);
  add('redis', USER_REDIS_URL);
  add('redis.password', `${USER_REDIS_PASSWORD}\n`);
  add('signing', USER_SIGNING_KEY);
  add('auth.browser', 'user-pages-client-secret\n');
  const signing = at(values, 'signing.existingSecret') as string;
  if (signing !== '' && (at(values, 'signing.passwordKey') as string) !== '')
    secrets.get(signing)?.set(at(values, 'signing.passwordKey'), USER_SIGNING_PASSWORD);
  addBuildkitSecrets(values, secrets);
  const authSecret = at<string>(values, 'auth.existingSecret');
  if (authSecret !== '')
    secrets.set(authSecret, new Map([['tokens.yaml', JSON.stringify(USER_AUTH_TOKENS)]]));
  // The issuer's CA is a ConfigMap of the team's.
  const issuerCa = at<string>(values, 'auth.issuerCa');
  if (issuerCa !== '') secrets.set(issuerCa, new Map([['ca.crt', selfSignedCert().cert]]));
  const hooks = at(values, 'prebuilds.hooks.existingSecret') as string;
  if (hooks !== '') {
    const keys = ['githubSecretKey', 'gitlabTokenKey', 'giteaSecretKey'].map((k) =>
      at<string>(values, `prebuilds.hooks.${k}`),
    );
    secrets.set(hooks, new Map(keys.filter((k) => k !== '').map((k) => [k, `user-hook-secret-${k}\n`])));
  }
  const tlsSecret = at(values, 'builder.tls.existingSecret') as string;
  if (tlsSecret !== '' && !at<boolean>(values, 'buildkit.enabled')) {
    const pem = selfSignedCert();
    secrets.set(
      tlsSecret,
      new Map([
        ['ca.crt', pem.cert],
        ['tls.crt', pem.cert],
        ['tls.key', pem.key],
      ]),
    );
  }
  return secrets;
}

/** Variables the service reads (the option table) or that its tools and SDKs read. */
const KNOWN_ENV = new Set([
  ...OPTIONS.map((o) => o.env),
  'DOCKER_CONFIG',
  'HOME',
  'TMPDIR',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'SIGNING_KEY_PASSWORD',
  'NODE_EXTRA_CA_CERTS', // an issuer's private CA (auth.issuerCa)
]);

for (const c of cases) {
  test(`${c.name}: the pod runs as 2000:2000, read-only, without capabilities or an API token`, async (t) => {
    const r = await rendered(c);
    const pod = deploymentSpec(r).template.spec;
    t.false(pod.automountServiceAccountToken);
    t.like(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 2000,
      runAsGroup: 2000,
      fsGroup: 2000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    t.deepEqual(container(r).securityContext, {
      runAsNonRoot: true,
      runAsUser: 2000,
      runAsGroup: 2000,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  test(`${c.name}: replicas, grace period, image and resources come from the values`, async (t) => {
    const r = await rendered(c);
    const spec = deploymentSpec(r);
    t.is(spec.replicas, at<number>(c.values, 'replicas'));
    t.is(
      spec.template.spec.terminationGracePeriodSeconds,
      at<number>(c.values, 'terminationGracePeriodSeconds'),
    );
    const tag = (at(c.values, 'image.tag') as string) || APP_VERSION;
    t.is(container(r).image, `${at(c.values, 'image.repository') as string}:${tag}`);
    t.deepEqual(container(r).resources, at(c.values, 'resources'));
  });

  test(`${c.name}: scratch at /tmp and the builder state dir are emptyDirs with the size limits of the values`, async (t) => {
    const r = await rendered(c);
    const volumes = deploymentSpec(r).template.spec.volumes;
    const mounts = container(r).volumeMounts;
    t.deepEqual(volumes.find((v) => v.name === 'scratch')?.emptyDir, {
      sizeLimit: at<string>(c.values, 'scratch.sizeLimit'),
    });
    t.deepEqual(volumes.find((v) => v.name === 'builder-state')?.emptyDir, {
      sizeLimit: at<string>(c.values, 'builderState.sizeLimit'),
    });
    t.deepEqual(
      mounts.find((m) => m.mountPath === '/tmp'),
      { name: 'scratch', mountPath: '/tmp' },
    );
    t.is(mounts.find((m) => m.mountPath === '/var/lib/builder-state')?.name, 'builder-state');
    // Every other mount is read-only configuration; secrets are not world-readable.
    for (const m of mounts.filter((m) => m.name !== 'scratch' && m.name !== 'builder-state')) {
      t.true(m.readOnly, m.name);
    }
    for (const v of volumes.filter((v) => v.secret !== undefined)) t.is(v.secret?.defaultMode, 0o440, v.name);
    t.deepEqual(mounts.map((m) => m.name).sort(), volumes.map((v) => v.name).sort());
  });

  test(`${c.name}: the environment names only variables the service or its tools read`, async (t) => {
    const env = container(await rendered(c)).env;
    const names = env.map((e) => e.name);
    for (const name of names) t.true(KNOWN_ENV.has(name), name);
    t.is(new Set(names).size, names.length, 'no variable twice');
    const value = (name: string): string | undefined => env.find((e) => e.name === name)?.value;
    t.is(value('SERVICE_NAME'), at<string>(c.values, 'serviceName'));
    t.is(value('BUILDER_NAME'), at<string>(c.values, 'builderName'));
    t.is(value('DOCKER_CONFIG'), '/var/lib/builder-state');
    t.is(value('HOME'), '/tmp');
    // DEPLOYMENT_ENVIRONMENT only for a non-empty `environment` (docs/operations.md).
    const environment = at(c.values, 'environment') as string;
    t.is(value('DEPLOYMENT_ENVIRONMENT'), environment === '' ? undefined : environment);
    t.is(
      names.includes('ERROR_TRACKING_DSN'),
      Boolean(at(c.values, 'errorTracking.dsn') || at(c.values, 'errorTracking.existingSecret')),
    );
  });

  test(`${c.name}: the probes ask the health routes on the service port`, async (t) => {
    const cont = container(await rendered(c));
    t.deepEqual(cont.ports, [
      { name: 'http', containerPort: at<number>(c.values, 'service.port'), protocol: 'TCP' },
    ]);
    t.deepEqual(cont.startupProbe.httpGet, { path: '/health/startup', port: 'http' });
    t.deepEqual(cont.livenessProbe.httpGet, { path: '/health/live', port: 'http' });
    t.deepEqual(cont.readinessProbe.httpGet, { path: '/health/ready', port: 'http' });
  });

  test(`${c.name}: a checksum annotation tracks each configuration object, so a change rolls the pod`, async (t) => {
    const r = await rendered(c);
    const annotations = deploymentSpec(r).template.metadata.annotations;
    const checksums = Object.entries(annotations).filter(([k]) => k.startsWith('checksum/'));
    t.is(checksums.length, 12);
    const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
    const sourceOf = (name: string): string | undefined =>
      r.documents.find((d) => d.source.endsWith(`-${name}.yaml`))?.text;
    // The hash of the object's rendered text, or of the empty template's lone newline when off.
    for (const [key, value] of checksums)
      t.is(value, sha(sourceOf(key.slice('checksum/'.length)) ?? '\n'), key);
    // Every ConfigMap and Secret of the chart that the pod mounts or reads has its checksum.
    const used = new Set([
      ...deploymentSpec(r).template.spec.volumes.map((v) => v.secret?.secretName ?? v.configMap?.name),
      ...container(r).env.map((e) => e.valueFrom?.secretKeyRef.name),
    ]);
    const usedDocs = r.documents.filter((d) => used.has(d.object.metadata.name));
    t.true(usedDocs.some((d) => d.source === 'templates/configmap-settings.yaml'));
    for (const d of usedDocs) {
      const name = /^templates\/(?:configmap|secret)-(.+)\.yaml$/.exec(d.source)?.[1];
      t.truthy(name && annotations[`checksum/${name}`], d.source);
    }
  });

  test(`${c.name}: the service's own loader accepts the files and environment the pod sees`, async (t) => {
    const r = await rendered(c);
    const view = podView(r, userSecrets(c.values));
    t.teardown(() => rmSync(view.root, { recursive: true, force: true }));
    const config = loadConfig({ argv: [], env: view.env });
    t.deepEqual(builderEndpoints(config), expectedEndpoints(c.values));
    t.is(config.service.port, at<number>(c.values, 'service.port'));
    t.is(config.observability.serviceName, at<string>(c.values, 'serviceName'));
    t.is(config.observability.environment, (at(c.values, 'environment') as string) || 'development');
    t.is(config.build.maxConcurrent, at<number>(c.values, 'build.maxConcurrent'));
    t.is(config.build.maxPerBuilder, at<number>(c.values, 'build.maxPerBuilder'));
    // A client pair always with the chart's BuildKit; with the team's, when a Secret or a key is given.
    const clientPair =
      at<boolean>(c.values, 'buildkit.enabled') ||
      at(c.values, 'builder.tls.existingSecret') !== '' ||
      at(c.values, 'builder.tls.key') !== '';
    t.is(config.builderTls?.keyPath !== undefined, clientPair, 'the client key is mounted');
    t.is(config.builderTls?.certPath !== undefined, clientPair, 'the client certificate is mounted');
    t.is(config.builderTls?.serverName, (at(c.values, 'builder.tls.serverName') as string) || undefined);
    t.is(config.build.fallbackImage, (at(c.values, 'build.fallbackImage') as string) || undefined);
    t.is(config.logs.retention, at<number>(c.values, 'logs.retention'));
    t.is(config.service.shutdownGraceSeconds, at<number>(c.values, 'service.shutdownGraceSeconds'));
    const gitEntries = at(c.values, 'gitCredentials.existingSecret')
      ? USER_GIT_CREDENTIALS
      : (at(c.values, 'gitCredentials.entries') as unknown[]);
    t.deepEqual(
      config.gitCredentials.map((g) => g.host),
      gitEntries.map((g) => (g as { host: string }).host),
    );
    t.deepEqual(config.registryMappingRules, at(c.values, 'registryMapping.rules'));
    const secretEntries = at(c.values, 'buildSecrets.existingSecret')
      ? USER_BUILD_SECRETS
      : (at(c.values, 'buildSecrets.entries') as { id: string }[]);
    t.deepEqual(
      (config.buildSecrets ?? []).map((s) => s.id),
      secretEntries.map((s) => s.id),
    );
    const subscriptions = at(c.values, 'events.existingSecret')
      ? USER_EVENT_SUBSCRIPTIONS
      : (at(c.values, 'events.subscriptions') as { name: string }[]);
    t.deepEqual(
      config.events.subscriptions.map((s) => s.name),
      subscriptions.map((s) => s.name),
    );
    t.deepEqual(config.events.retrySeconds, at(c.values, 'events.retrySeconds'));
    t.is(String(config.auth.mode), at<string>(c.values, 'auth.mode'));
    const names = (list: unknown): string[] => (list as { name: string }[]).map((e) => e.name);
    t.deepEqual(names(config.auth.issuers), names(at(c.values, 'auth.issuers')));
    t.deepEqual(names(config.auth.rules), names(at(c.values, 'auth.rules')));
    const authTokens = at(c.values, 'auth.existingSecret') ? USER_AUTH_TOKENS : at(c.values, 'auth.tokens');
    t.deepEqual(config.auth.tokens, authTokens);
    const dsn = at(c.values, 'errorTracking.existingSecret') ? USER_DSN : at(c.values, 'errorTracking.dsn');
    t.is(config.errorTracking.dsn, (dsn as string) || undefined);
    const redisUrl = at(c.values, 'redis.existingSecret') ? USER_REDIS_URL : at(c.values, 'redis.url');
    t.is(config.redis.url, (redisUrl as string) || undefined);
    t.deepEqual(config.redis.clusterNodes, at(c.values, 'redis.clusterNodes'));
    t.deepEqual(config.redis.sentinels, at(c.values, 'redis.sentinels'));
    t.is(config.redis.sentinelName, at<string>(c.values, 'redis.sentinelName') || undefined);
    t.is(config.redis.tls, at<boolean>(c.values, 'redis.tls'));
    const clusterPassword = at(c.values, 'redis.password.existingSecret') !== '';
    t.is(config.redis.password, clusterPassword ? USER_REDIS_PASSWORD : undefined);
    t.is(String(config.build.provenance), at<string>(c.values, 'build.provenance'));
    t.is(config.build.sbom, at<boolean>(c.values, 'build.sbom'));
    t.is(config.signing !== undefined, Boolean(at(c.values, 'signing.existingSecret')), 'signing key loaded');
    t.deepEqual(
      config.prebuilds.configurations.map((p) => p.repository),
      (at(c.values, 'prebuilds.configurations') as { repository: string }[]).map((p) => p.repository),
    );
    t.is(
      config.prebuilds.reconcileIntervalSeconds,
      at<number>(c.values, 'prebuilds.reconcileIntervalSeconds'),
    );
    const hookSet = (key: string): boolean =>
      Boolean(at(c.values, 'prebuilds.hooks.existingSecret') && at(c.values, `prebuilds.hooks.${key}`));
    t.is(
      config.prebuilds.hookSecrets.github !== undefined,
      hookSet('githubSecretKey'),
      'GitHub webhook secret',
    );
    t.is(
      config.prebuilds.hookSecrets.gitlab !== undefined,
      hookSet('gitlabTokenKey'),
      'GitLab webhook token',
    );
  });

  test(`${c.name}: several replicas come with a disruption budget and a spread across nodes`, async (t) => {
    const r = await rendered(c);
    const replicas = at<number>(c.values, 'replicas');
    const pdb = r.find('PodDisruptionBudget');
    const spread = (deploymentSpec(r).template.spec as { topologySpreadConstraints?: unknown[] })
      .topologySpreadConstraints;
    t.is(pdb !== undefined, replicas > 1);
    t.is(spread !== undefined, replicas > 1);
    if (pdb === undefined || spread === undefined) return;
    const selector = deploymentSpec(r).selector.matchLabels;
    t.deepEqual(pdb.spec, { maxUnavailable: 1, selector: { matchLabels: selector } });
    t.deepEqual(spread, [
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: selector },
      },
    ]);
  });

  test(`${c.name}: the Service selects the pod; monitoring objects exist exactly when enabled`, async (t) => {
    const r = await rendered(c);
    const spec = deploymentSpec(r);
    const service = r.find('Service', '-image-build-service') as K8sObject;
    const svcSpec = service.spec as {
      selector: Record<string, string>;
      ports: { name: string; targetPort: string }[];
    };
    t.like(spec.template.metadata.labels, svcSpec.selector);
    t.deepEqual(spec.selector.matchLabels, svcSpec.selector);
    t.deepEqual(
      svcSpec.ports.map((p) => [p.name, p.targetPort]),
      [['http', 'http']],
    );

    const monitor = r.find('ServiceMonitor');
    t.is(monitor !== undefined, at<boolean>(c.values, 'metrics.serviceMonitor.enabled'));
    if (monitor !== undefined) {
      const m = monitor.spec as {
        selector: { matchLabels: Record<string, string> };
        endpoints: { port: string; path: string; interval: string }[];
      };
      t.like(service.metadata.labels, m.selector.matchLabels);
      t.deepEqual(m.endpoints, [
        { port: 'http', path: '/metrics', interval: at<string>(c.values, 'metrics.serviceMonitor.interval') },
      ]);
      t.like(monitor.metadata.labels, at(c.values, 'metrics.serviceMonitor.labels') as object);
    }
    const rule = r.find('PrometheusRule');
    t.is(rule !== undefined, at<boolean>(c.values, 'metrics.prometheusRule.enabled'));
    if (rule !== undefined)
      t.like(rule.metadata.labels, at(c.values, 'metrics.prometheusRule.labels') as object);
    const dashboard = r.find('ConfigMap', '-grafana-dashboard');
    t.is(dashboard !== undefined, at<boolean>(c.values, 'metrics.grafanaDashboard.enabled'));
  });
}

test('a termination grace without 10 s beyond the shutdown grace is refused when rendering', async (t) => {
  const error = await t.throwsAsync(render([], { terminationGracePeriodSeconds: 299 }));
  t.regex(
    error?.message ?? '',
    /terminationGracePeriodSeconds must be at least service\.shutdownGraceSeconds \+ 10/,
  );
  const spec = deploymentSpec(await render([], { terminationGracePeriodSeconds: 300 }));
  t.is(spec.template.spec.terminationGracePeriodSeconds, 300);
});

test('changing one setting changes only the settings checksum', async (t) => {
  // A BuildKit of the team's: `helm template` (no cluster to look up) generates new chart TLS each run.
  const minimal = [valuesPath('valid', 'minimal.yaml')];
  const before = deploymentSpec(await render(minimal)).template.metadata.annotations;
  const after = deploymentSpec(await render(minimal, { 'build.maxConcurrent': 7 })).template.metadata
    .annotations;
  const changed = Object.keys(before).filter((k) => before[k] !== after[k]);
  t.deepEqual(changed, ['checksum/settings']);
});
