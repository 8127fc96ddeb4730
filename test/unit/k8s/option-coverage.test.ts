// Every value the service reads (the option table, src/config/options.ts) has a key in the chart's
// schema, and every service key of the schema is read by the service: no orphan on either side.
// Each mapped key is at least as strict as the service's own check of that value.
import test from 'ava';
import { OPTIONS, type OptionName } from '../../../src/config/options.js';
import { valueSchema } from '../../../src/config/schema.js';
import {
  schemaAt,
  schemaLeaves,
  valuesFiles,
  valuesSchema,
  type JsonSchema,
} from '../../helpers/chart/chart.js';
import { render, valuesPath } from '../../helpers/chart/helm.js';
import { container } from '../../helpers/chart/pod.js';

/** Where the chart takes each option from: a values path, or the chart itself (with why). */
const CHART_SOURCE: Record<OptionName, { values: string[] } | { chart: string }> = {
  builderEndpoint: { values: ['builder.endpoint'] },
  // The three files are mounted from one Secret (ca.crt, tls.crt, tls.key; the team's, or the chart's
  // from the PEM texts or from the chart's BuildKit) and named by env vars.
  builderTlsCa: { values: ['builder.tls.existingSecret', 'builder.tls.ca'] },
  builderTlsCert: { values: ['builder.tls.existingSecret', 'builder.tls.cert'] },
  builderTlsKey: { values: ['builder.tls.existingSecret', 'builder.tls.key'] },
  builderTlsServerName: { values: ['builder.tls.serverName'] },
  port: { values: ['service.port'] },
  host: { chart: 'a pod listens on every interface: its Service reaches it through the pod IP' },
  builderName: { values: ['builderName'] },
  sshHostKeyPolicy: { values: ['sshHostKeyPolicy'] },
  insecureRegistries: { values: ['insecureRegistries'] },
  allowInsecureGitProtocols: { values: ['git.allowInsecureProtocols'] },
  gitCredentialsConfigPath: {
    values: ['gitCredentials.entries', 'gitCredentials.existingSecret', 'gitCredentials.existingSecretKey'],
  },
  registryMappingConfigPath: { values: ['registryMapping.rules'] },
  buildSecretsConfigPath: {
    values: ['buildSecrets.entries', 'buildSecrets.existingSecret', 'buildSecrets.existingSecretKey'],
  },
  eventSubscriptionsConfigPath: {
    values: ['events.subscriptions', 'events.existingSecret', 'events.existingSecretKey'],
  },
  eventRetrySeconds: { values: ['events.retrySeconds'] },
  buildPlatforms: { values: ['build.platforms'] },
  buildNoCache: { values: ['build.noCache'] },
  buildCacheFrom: { values: ['build.cacheFrom'] },
  buildCacheTo: { values: ['build.cacheTo'] },
  builderMode: { values: ['build.mode'] },
  cloneTimeoutSeconds: { values: ['build.cloneTimeoutSeconds'] },
  buildTimeoutSeconds: { values: ['build.timeoutSeconds'] },
  maxConcurrentBuilds: { values: ['build.maxConcurrent'] },
  maxBuildsPerBuilder: { values: ['build.maxPerBuilder'] },
  maxQueuedBuilds: { values: ['build.maxQueued'] },
  maxQueuedPrebuilds: { values: ['build.maxQueuedPrebuilds'] },
  buildQuotasPath: { values: ['build.quotas'] },
  nativePlatformsOnly: { values: ['build.nativePlatformsOnly'] },
  buildReuse: { values: ['build.reuse'] },
  fallbackImage: { values: ['build.fallbackImage'] },
  buildProvenance: { values: ['build.provenance'] },
  buildCompression: { values: ['build.compression'] },
  buildSbom: { values: ['build.sbom'] },
  buildSbomGenerator: { values: ['build.sbomGenerator'] },
  provenanceBuilderId: { values: ['build.provenanceBuilderId'] },
  signingKeyPath: {
    chart: 'mounted from the Secret signing.existingSecret names; SIGNING_KEY_PATH points at it',
  },
  errorTrackingDsn: {
    values: ['errorTracking.dsn', 'errorTracking.existingSecret', 'errorTracking.existingSecretKey'],
  },
  serviceName: { values: ['serviceName'] },
  environment: { values: ['environment'] },
  commandLogRetention: { values: ['logs.retention'] },
  buildHistory: { values: ['build.history'] },
  buildHistoryDays: { values: ['build.historyDays'] },
  retentionMode: { values: ['retention.mode'] },
  retentionKeepPerBranch: { values: ['retention.keepPerBranch'] },
  retentionKeepServedDays: { values: ['retention.keepServedDays'] },
  retentionKeepTags: { values: ['retention.keepTags'] },
  retentionIntervalMinutes: { values: ['retention.intervalMinutes'] },
  retentionRepositories: { values: ['retention.repositories'] },
  usageRetentionDays: { values: ['usage.retentionDays'] },
  usageMetricTenants: { values: ['usage.metricTenants'] },
  redisUrl: { values: ['redis.url', 'redis.existingSecret', 'redis.existingSecretKey'] },
  redisClusterNodes: { values: ['redis.clusterNodes'] },
  redisPasswordFile: { values: ['redis.password.existingSecret', 'redis.password.existingSecretKey'] },
  redisTls: { values: ['redis.tls'] },
  redisSentinels: { values: ['redis.sentinels'] },
  redisSentinelName: { values: ['redis.sentinelName'] },
  authMode: { values: ['auth.mode'] },
  authIssuersPath: { values: ['auth.issuers'] },
  authTokensPath: { values: ['auth.tokens', 'auth.existingSecret'] },
  authRulesPath: { values: ['auth.rules'] },
  authBrowserIssuer: { values: ['auth.browser.issuer'] },
  authBrowserClientId: { values: ['auth.browser.clientId'] },
  authBrowserScopes: { values: ['auth.browser.scopes'] },
  authBrowserRedirectUrl: { values: ['auth.browser.redirectUrl'] },
  authBrowserSessionHours: { values: ['auth.browser.sessionHours'] },
  authBrowserClientSecretFile: {
    values: ['auth.browser.existingSecret', 'auth.browser.existingSecretKey'],
  },
  prebuildConfigurationsPath: { values: ['prebuilds.configurations', 'prebuilds.existingConfigMap'] },
  prebuildReconcileIntervalSeconds: { values: ['prebuilds.reconcileIntervalSeconds'] },
  prebuildRefreshIntervalSeconds: { values: ['prebuilds.refreshIntervalSeconds'] },
  githubHookSecretFile: { values: ['prebuilds.hooks.existingSecret', 'prebuilds.hooks.githubSecretKey'] },
  gitlabHookTokenFile: { values: ['prebuilds.hooks.existingSecret', 'prebuilds.hooks.gitlabTokenKey'] },
  giteaHookSecretFile: { values: ['prebuilds.hooks.existingSecret', 'prebuilds.hooks.giteaSecretKey'] },
  shutdownGraceSeconds: { values: ['service.shutdownGraceSeconds'] },
  settingsPath: { chart: 'the chart renders the settings file and sets SERVICE_CONFIG_PATH' },
};

/** Values the service reads outside the option table: variables of Node itself. */
const NOT_OPTIONS: Record<string, string> = {
  'auth.issuerCa': "NODE_EXTRA_CA_CERTS, Node's own variable for a private CA",
};

/** Top-level values that configure the Kubernetes objects, not the service. */
const CHART_ONLY = [
  'replicas',
  'image',
  'imagePullSecrets',
  'resources',
  'terminationGracePeriodSeconds',
  'scratch',
  'builderState',
  'podAnnotations',
  'podLabels',
  'nodeSelector',
  'tolerations',
  'kubernetesService',
  'ingress',
  'networkPolicy',
  'buildkit', // the chart-deployed BuildKit; the service gets its endpoints and TLS files
  'tracing', // OpenTelemetry's own variables, read before configuration (docs/operations.md)
  'registryAuth', // the ambient docker config.json, not an option (README, Configuration)
  'metrics',
  'signing', // the signing key's Secret, mounted as the file SIGNING_KEY_PATH names
];

test('every option of the service has a chart source, and the table lists no other option', (t) => {
  t.deepEqual(OPTIONS.map((o) => o.name).sort(), Object.keys(CHART_SOURCE).sort());
});

test('every values path of the mapping exists in the schema', (t) => {
  const schema = valuesSchema();
  for (const [name, source] of Object.entries(CHART_SOURCE)) {
    if ('chart' in source) continue;
    for (const path of source.values)
      t.truthy(schemaAt(schema, path), `${name}: ${path} missing from the schema`);
  }
});

test('every key of the schema is either read by the service or a chart-only key', (t) => {
  const mapped = new Set(Object.values(CHART_SOURCE).flatMap((s) => ('values' in s ? s.values : [])));
  const orphans = schemaLeaves(valuesSchema()).filter(
    (path) => !mapped.has(path) && !(path in NOT_OPTIONS) && !CHART_ONLY.includes(path.split('.')[0] ?? ''),
  );
  t.deepEqual(orphans, []);
});

test('settings keys keep the service settings file names (the rendered file nests them as is)', (t) => {
  for (const option of OPTIONS) {
    const source = CHART_SOURCE[option.name];
    if (option.settingsKey === undefined || !('values' in source)) continue;
    if (option.settingsKey.startsWith('observability.') || option.settingsKey.startsWith('errorTracking.'))
      continue;
    // Files mounted from a Secret: the settings key would name a path inside the pod.
    if (source.values[0]?.endsWith('.existingSecret') === true) continue;
    t.is(source.values[0], option.settingsKey, option.name);
  }
});

/** The chart may be stricter than the service, never looser. */
test('each mapped value is at least as strict as the service check', (t) => {
  for (const option of OPTIONS) {
    const source = CHART_SOURCE[option.name];
    if (!('values' in source) || (option.settingsKey === undefined && option.name !== 'builderName'))
      continue;
    if (source.values[0]?.endsWith('.existingSecret') === true) continue;
    const chart = schemaAt(valuesSchema(), source.values[0] ?? '') as JsonSchema;
    const service = valueSchema(option) as JsonSchema;
    // A list that the settings file also takes as one comma-separated string (builder.endpoint).
    const chartTypes = [chart.type]
      .flat()
      .filter((type) => !(option.settingsText === true && type === 'string'));
    t.deepEqual(chartTypes, [service.type], `${option.name}: type`);
    if (service.enum !== undefined) t.deepEqual(chart.enum, service.enum, `${option.name}: enum`);
    if (typeof service.minimum === 'number') {
      t.true((chart.minimum as number) >= service.minimum, `${option.name}: minimum`);
    }
    if (typeof service.maximum === 'number') {
      t.true((chart.maximum as number) <= service.maximum, `${option.name}: maximum`);
    }
    const items = service.items as JsonSchema | undefined;
    if (items?.pattern !== undefined) {
      // An item may also be a structured settings entry (builder.endpoint's {endpoint, platforms}).
      const chartItems = chart.items as JsonSchema;
      const text =
        (chartItems.anyOf as JsonSchema[] | undefined)?.find((s) => s.type === 'string') ?? chartItems;
      t.is(text.pattern, items.pattern, `${option.name}: item pattern`);
    }
  }
});

test('across the valid values files, the pod gets every variable that points the service at its files', async (t) => {
  const cases = [[], ...valuesFiles('valid').map((f) => [valuesPath('valid', f.name)])];
  const names = new Set<string>();
  for (const files of cases) for (const e of container(await render(files)).env) names.add(e.name);
  // Each is an option of the service or a variable its tools read (checked per file in rendered.test.ts).
  for (const required of [
    'SERVICE_NAME',
    'DEPLOYMENT_ENVIRONMENT',
    'SERVICE_CONFIG_PATH',
    'GIT_CREDENTIALS_CONFIG_PATH',
    'BUILD_SECRETS_CONFIG_PATH',
    'EVENT_SUBSCRIPTIONS_CONFIG_PATH',
    'REGISTRY_MAPPING_CONFIG_PATH',
    'PREBUILD_CONFIGURATIONS_PATH',
    'GITHUB_HOOK_SECRET_FILE',
    'ERROR_TRACKING_DSN',
    'DOCKER_CONFIG',
    'BUILDER_NAME',
    'BUILDER_ENDPOINT',
    'BUILDER_TLS_CA_PATH',
    'BUILDER_TLS_CERT_PATH',
    'BUILDER_TLS_KEY_PATH',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
  ]) {
    t.true(names.has(required), required);
  }
});
