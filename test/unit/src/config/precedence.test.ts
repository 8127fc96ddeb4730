import test from 'ava';
import { builderEndpoints } from '../../../../src/config/builder-endpoints.js';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { loadConfig } from '../../../../src/config/load.js';
import { OPTIONS, type OptionName, type OptionValue } from '../../../../src/config/options.js';
import type { Config } from '../../../../src/config/types.js';
import { selfSignedCert } from '../../../helpers/fake-registry.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-precedence-'));
const dockerDir = join(dir, 'docker'); // no config.json: {auths: {}}
const baseEnv = { DOCKER_CONFIG: dockerDir, HOME: dir, TMPDIR: dir };
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, name.endsWith('.json') ? JSON.stringify(content) : toYaml(content));
  return path;
}

const pem = selfSignedCert();
const copies = (name: string, text: string): [string, string, string] =>
  ['a', 'b', 'c'].map((n) => {
    const path = join(dir, `${name}-${n}.pem`);
    writeFileSync(path, text);
    return path;
  }) as [string, string, string];
const certFiles = copies('cert', pem.cert);
const keyFiles = copies('key', pem.key);

const credsFile = (host: string): string =>
  file(`creds-${host}.yaml`, [{ host, kind: 'https', username: 'u', token: `tok-${host}` }]);
const keyFile = (name: string): string => {
  const path = join(dir, `signing-${name}.pem`);
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return path;
};
const rulesFile = (registry: string): string => file(`rules-${registry}.json`, [{ registry }]);
const secretsFile = (id: string): string =>
  file(`secrets-${id}.yaml`, [{ id, value: `v-${id}`, repositories: [{ host: 'git.example' }] }]);
const prebuildsFile = (name: string): string =>
  file(`prebuilds-${name}.yaml`, [
    { repository: 'https://git.example/r.git', branches: ['main'], image: { registry: 'r.example', name } },
  ]);
const hookFile = (name: string): string => {
  const path = join(dir, `hook-${name}`);
  writeFileSync(path, `secret-${name}\n`);
  return path;
};

const quotasFile = (tenant: string): string => file(`quotas-${tenant}.yaml`, [{ tenant, maxRunning: 1 }]);
const tokensFile = (name: string): string => file(`tokens-${name}.yaml`, [{ name, sha256: 'ab'.repeat(32) }]);
const issuersFile = (name: string): string =>
  file(`issuers-${name}.yaml`, [{ name, issuer: `https://${name}.example`, audience: 'ibs' }]);
const accessRulesFile = (name: string): string =>
  file(`access-rules-${name}.yaml`, [{ name, token: 'ops', actions: ['read'] }]);

const peopleIssuers = file('issuers-people.yaml', [
  ...['people', 'p-flag', 'p-env', 'p-file'].map((name) => ({
    name,
    issuer: `https://${name}.example`,
    audience: 'ibs',
  })),
]);
const BROWSER: Readonly<Record<string, string>> = {
  '--auth-browser-issuer': 'people',
  '--auth-browser-client-id': 'ibs',
  '--auth-browser-redirect-url': 'https://ibs.example/auth/callback',
};
/** What people's sign-in needs beside the option under test (its own flag left out). */
const browserCompanions = (own: string): string[] => [
  '--auth-mode=enforce',
  `--auth-issuers-path=${peopleIssuers}`,
  ...Object.entries(BROWSER)
    .filter(([flag]) => flag !== own)
    .map(([flag, value]) => `${flag}=${value}`),
];
const clientSecretFile = (name: string): string => {
  const path = join(dir, `client-secret-${name}`);
  writeFileSync(path, `client-secret-${name}\n`);
  return path;
};

const subscriptionsFile = (name: string): string =>
  file(`subscriptions-${name}.yaml`, [
    {
      name,
      url: `https://${name}.example/hook`,
      secrets: [`whsec_${Buffer.alloc(32, name).toString('base64')}`],
    },
  ]);

interface Case {
  /** Three distinct values: given as flag, env and settings file (the settings one only with a key). */
  readonly values: readonly [OptionValue, OptionValue, OptionValue];
  /** The Config field the option lands in. */
  readonly read: (config: Config) => unknown;
  /** What read() gives for each value (default: the value itself). */
  readonly expected?: readonly [unknown, unknown, unknown];
  /** What read() gives with nothing set (default: the option's default). */
  readonly unset?: unknown;
  /** Flags the option needs beside it (a client certificate needs its key). */
  readonly companions?: readonly string[];
}

const CASES: { readonly [K in OptionName]: Case } = {
  builderEndpoint: {
    values: [['tcp://127.0.0.1:1', 'tcp://127.0.0.1:4'], ['tcp://127.0.0.1:2'], ['tcp://127.0.0.1:3']],
    read: (c) => builderEndpoints(c),
  },
  builderTlsCa: { values: certFiles, read: (c) => c.builderTls?.caPath },
  builderTlsCert: {
    values: certFiles,
    read: (c) => c.builderTls?.certPath,
    companions: [`--builder-tls-key=${keyFiles[0]}`],
  },
  builderTlsKey: {
    values: keyFiles,
    read: (c) => c.builderTls?.keyPath,
    companions: [`--builder-tls-cert=${certFiles[0]}`],
  },
  builderTlsServerName: {
    values: ['a.example', 'b.example', 'c.example'],
    read: (c) => c.builderTls?.serverName,
    companions: [`--builder-tls-ca=${certFiles[0]}`],
  },
  port: { values: [1111, 2222, 3333], read: (c) => c.service.port },
  host: { values: ['127.0.0.1', '::1', 'localhost'], read: (c) => c.service.host },
  builderName: { values: ['b-flag', 'b-env', 'b-file'], read: (c) => c.builderName },
  sshHostKeyPolicy: { values: ['pinned', 'tofu', 'pinned'], read: (c) => c.sshHostKeyPolicy },
  insecureRegistries: {
    values: [['a:1', 'b:2'], ['c:3'], ['d:4', 'e']],
    read: (c) => c.insecureRegistries,
  },
  allowInsecureGitProtocols: { values: [true, false, true], read: (c) => c.git.allowInsecureProtocols },
  gitCredentialsConfigPath: {
    values: [credsFile('flag.example'), credsFile('env.example'), credsFile('file.example')],
    read: (c) => c.gitCredentials.map((e) => e.host),
    expected: [['flag.example'], ['env.example'], ['file.example']],
    unset: [],
  },
  registryMappingConfigPath: {
    values: [rulesFile('r-flag'), rulesFile('r-env'), rulesFile('r-file')],
    read: (c) => c.registryMappingRules.map((r) => r.registry),
    expected: [['r-flag'], ['r-env'], ['r-file']],
    unset: [],
  },
  buildSecretsConfigPath: {
    values: [secretsFile('s-flag'), secretsFile('s-env'), secretsFile('s-file')],
    read: (c) => (c.buildSecrets ?? []).map((e) => e.id),
    expected: [['s-flag'], ['s-env'], ['s-file']],
    unset: [],
  },
  eventSubscriptionsConfigPath: {
    values: [subscriptionsFile('e-flag'), subscriptionsFile('e-env'), subscriptionsFile('e-file')],
    read: (c) => c.events.subscriptions.map((e) => e.name),
    expected: [['e-flag'], ['e-env'], ['e-file']],
    unset: [],
  },
  eventRetrySeconds: {
    values: [['1', '2'], ['3'], ['4', '5', '6']],
    read: (c) => c.events.retrySeconds,
    expected: [[1, 2], [3], [4, 5, 6]],
    unset: [5, 300, 1800, 7200, 18000, 36000, 36000],
  },
  buildPlatforms: {
    values: [['linux/amd64', 'linux/arm64/v8'], ['linux/386'], ['linux/arm/v7']],
    read: (c) => c.build.platforms,
  },
  buildNoCache: { values: [true, false, true], read: (c) => c.build.noCache },
  buildCacheFrom: {
    values: ['type=registry,ref=r/a:c', 'type=gha', 'r/bare:cache'],
    read: (c) => c.build.cacheFrom,
  },
  buildCacheTo: {
    values: ['type=inline', 'type=gha,mode=max', 'type=registry,ref=r/x'],
    read: (c) => c.build.cacheTo,
  },
  builderMode: { values: ['never', 'auto', 'never'], read: (c) => c.build.mode },
  cloneTimeoutSeconds: { values: [1, 2, 3], read: (c) => c.build.cloneTimeoutSeconds },
  buildTimeoutSeconds: { values: [10, 20, 30], read: (c) => c.build.timeoutSeconds },
  maxConcurrentBuilds: { values: [0, 1, 9], read: (c) => c.build.maxConcurrent },
  maxBuildsPerBuilder: { values: [1, 2, 3], read: (c) => c.build.maxPerBuilder },
  maxQueuedBuilds: { values: [0, 5, 9], read: (c) => c.build.maxQueued },
  maxQueuedPrebuilds: { values: [0, 5, 9], read: (c) => c.build.maxQueuedPrebuilds },
  buildQuotasPath: {
    values: [quotasFile('flag'), quotasFile('env'), quotasFile('file')],
    read: (c) => c.build.quotas.map((q) => q.tenant),
    expected: [['flag'], ['env'], ['file']],
    unset: [],
  },
  buildReuse: { values: [false, true, false], read: (c) => c.build.reuse },
  nativePlatformsOnly: { values: [true, false, true], read: (c) => c.build.nativePlatformsOnly },
  fallbackImage: { values: ['r/flag:1', 'r/env:1', 'r/file:1'], read: (c) => c.build.fallbackImage },
  buildProvenance: { values: ['max', 'off', 'max'], read: (c) => c.build.provenance },
  buildCompression: { values: ['zstd', 'estargz', 'zstd'], read: (c) => c.build.compression },
  buildSbom: { values: [true, false, true], read: (c) => c.build.sbom },
  buildSbomGenerator: {
    values: ['r/gen:flag', 'r/gen:env', 'r/gen:file'],
    read: (c) => c.build.sbomGenerator,
  },
  provenanceBuilderId: {
    values: ['https://flag.example/b', 'urn:env:b', 'https://file.example/b'],
    read: (c) => c.build.provenanceBuilderId,
  },
  signingKeyPath: {
    values: [keyFile('flag'), keyFile('env'), keyFile('file')],
    read: (c) => c.signing?.path,
  },
  errorTrackingDsn: {
    values: ['https://k1@errors.example/1', 'https://k2@errors.example/2', 'https://k3@errors.example/3'],
    read: (c) => c.errorTracking.dsn,
  },
  serviceName: { values: ['s-flag', 's-env', 's-file'], read: (c) => c.observability.serviceName },
  environment: { values: ['e-flag', 'e-env', 'e-file'], read: (c) => c.observability.environment },
  commandLogRetention: { values: [1, 2, 3], read: (c) => c.logs.retention },
  buildHistory: { values: [4, 5, 6], read: (c) => c.build.history },
  buildHistoryDays: { values: [0.5, 7, 45], read: (c) => c.build.historyDays },
  retentionMode: { values: ['dry-run', 'delete', 'dry-run'], read: (c) => c.retention.mode },
  retentionKeepPerBranch: { values: [0, 3, 5], read: (c) => c.retention.keepPerBranch },
  retentionKeepServedDays: { values: [0.25, 7, 1.5], read: (c) => c.retention.keepServedDays },
  retentionKeepTags: { values: [['v*'], ['release-?'], ['main']], read: (c) => c.retention.keepTags },
  retentionIntervalMinutes: { values: [5, 15, 30], read: (c) => c.retention.intervalMinutes },
  retentionRepositories: {
    values: [['r.example/a'], ['r.example/b'], ['r.example/c']],
    read: (c) => c.retention.repositories,
  },
  usageRetentionDays: { values: [30, 90, 366], read: (c) => c.usage.retentionDays },
  usageMetricTenants: { values: [['team-a'], ['team-b'], ['team-c']], read: (c) => c.usage.metricTenants },
  redisUrl: {
    values: ['redis://:p1@flag.example:6379', 'rediss://u:p2@env.example:6380/2', 'redis://file.example'],
    read: (c) => c.redis.url,
  },
  redisClusterNodes: {
    values: [['10.0.0.1:7000', 'a.example:7001'], ['[::1]:7002'], ['b.example:7003']],
    read: (c) => c.redis.clusterNodes,
  },
  redisPasswordFile: {
    values: [hookFile('rp1'), hookFile('rp2'), hookFile('rp3')],
    read: (c) => c.redis.password,
    expected: ['secret-rp1', 'secret-rp2', 'secret-rp3'],
    companions: ['--redis-cluster-nodes=127.0.0.1:7000'],
  },
  redisSentinels: {
    values: [['10.0.0.1:26379', 'a.example:26379'], ['[::1]:26379'], ['b.example:26379']],
    read: (c) => c.redis.sentinels,
    companions: ['--redis-sentinel-name=primary'],
  },
  redisSentinelName: {
    values: ['p-flag', 'p-env', 'p-file'],
    read: (c) => c.redis.sentinelName,
    companions: ['--redis-sentinels=127.0.0.1:26379'],
  },
  redisTls: {
    values: [true, false, true],
    read: (c) => c.redis.tls,
    companions: ['--redis-cluster-nodes=127.0.0.1:7000'],
  },
  authMode: {
    values: ['enforce', 'off', 'enforce'],
    read: (c) => c.auth.mode,
    companions: [`--auth-tokens-path=${tokensFile('ops')}`],
  },
  authIssuersPath: {
    values: [issuersFile('flag'), issuersFile('env'), issuersFile('file')],
    read: (c) => c.auth.issuers.map((i) => i.name),
    expected: [['flag'], ['env'], ['file']],
    unset: [],
  },
  authTokensPath: {
    values: [tokensFile('flag'), tokensFile('env'), tokensFile('file')],
    read: (c) => c.auth.tokens.map((t) => t.name),
    expected: [['flag'], ['env'], ['file']],
    unset: [],
  },
  authRulesPath: {
    values: [accessRulesFile('flag'), accessRulesFile('env'), accessRulesFile('file')],
    read: (c) => c.auth.rules.map((r) => r.name),
    expected: [['flag'], ['env'], ['file']],
    unset: [],
    companions: [`--auth-tokens-path=${tokensFile('ops')}`],
  },
  authBrowserIssuer: {
    values: ['p-flag', 'p-env', 'p-file'],
    read: (c) => c.auth.browser.issuer,
    companions: browserCompanions('--auth-browser-issuer'),
  },
  authBrowserClientId: {
    values: ['c-flag', 'c-env', 'c-file'],
    read: (c) => c.auth.browser.clientId,
    companions: browserCompanions('--auth-browser-client-id'),
  },
  authBrowserScopes: {
    values: [['openid', 'groups'], ['openid', 'email'], ['openid']],
    read: (c) => c.auth.browser.scopes,
  },
  authBrowserRedirectUrl: {
    values: [
      'https://flag.example/auth/callback',
      'http://127.0.0.1:8080/auth/callback',
      'https://file.example/ui/auth/callback',
    ],
    read: (c) => c.auth.browser.redirectUrl,
    companions: browserCompanions('--auth-browser-redirect-url'),
  },
  authBrowserSessionHours: { values: [1, 2, 3], read: (c) => c.auth.browser.sessionHours },
  authBrowserClientSecretFile: {
    values: [clientSecretFile('flag'), clientSecretFile('env'), clientSecretFile('file')],
    read: (c) => c.auth.browserClientSecret,
    expected: ['client-secret-flag', 'client-secret-env', 'client-secret-file'],
    unset: undefined,
    companions: browserCompanions(''),
  },
  prebuildConfigurationsPath: {
    values: [prebuildsFile('flag'), prebuildsFile('env'), prebuildsFile('file')],
    read: (c) => c.prebuilds.configurations.map((e) => e.image.name),
    expected: [['flag'], ['env'], ['file']],
    unset: [],
  },
  prebuildReconcileIntervalSeconds: {
    values: [11, 12, 13],
    read: (c) => c.prebuilds.reconcileIntervalSeconds,
  },
  prebuildRefreshIntervalSeconds: { values: [21, 22, 23], read: (c) => c.prebuilds.refreshIntervalSeconds },
  githubHookSecretFile: {
    values: [hookFile('gh1'), hookFile('gh2'), hookFile('gh3')],
    read: (c) => c.prebuilds.hookSecrets.github,
    expected: ['secret-gh1', 'secret-gh2', 'secret-gh3'],
  },
  gitlabHookTokenFile: {
    values: [hookFile('gl1'), hookFile('gl2'), hookFile('gl3')],
    read: (c) => c.prebuilds.hookSecrets.gitlab,
    expected: ['secret-gl1', 'secret-gl2', 'secret-gl3'],
  },
  giteaHookSecretFile: {
    values: [hookFile('gt1'), hookFile('gt2'), hookFile('gt3')],
    read: (c) => c.prebuilds.hookSecrets.gitea,
    expected: ['secret-gt1', 'secret-gt2', 'secret-gt3'],
  },
  shutdownGraceSeconds: { values: [5, 6, 7], read: (c) => c.service.shutdownGraceSeconds },
  settingsPath: {
    values: [file('flag-settings.json', {}), file('env-settings.yml', {}), 'unused'],
    read: (c) => c.settingsPath,
  },
};

const asText = (value: OptionValue): string => (Array.isArray(value) ? value.join(',') : String(value));

/** `{a: {b: value}}` for `a.b`. */
function nested(key: string, value: OptionValue): Record<string, unknown> {
  return key
    .split('.')
    .reverse()
    .reduce<unknown>((inner, part) => ({ [part]: inner }), value) as Record<string, unknown>;
}

test('every option of the table has a precedence case', (t) => {
  t.deepEqual(Object.keys(CASES).sort(), OPTIONS.map((o) => o.name).sort());
});

for (const option of OPTIONS) {
  const c = CASES[option.name];
  const [flagValue, envValue, fileValue] = c.values;
  const expected = c.expected ?? c.values;
  const settings =
    option.settingsKey === undefined
      ? undefined
      : file(`settings-${option.name}.yaml`, nested(option.settingsKey, fileValue));
  // The settings file option itself: the flag/env under test would replace the file that holds the value.
  const settingsArgv = [...(settings === undefined ? [] : ['--settings', settings]), ...(c.companions ?? [])];

  test(`${option.flag}: flag beats env beats settings file beats default`, (t) => {
    const unset = 'unset' in c ? c.unset : option.default;
    // Each level differs from the one below it, so a wrong precedence cannot pass.
    t.notDeepEqual(expected[0], expected[1]);
    if (settings !== undefined) {
      t.notDeepEqual(expected[1], expected[2]);
      t.notDeepEqual(expected[2], unset);
    } else {
      t.notDeepEqual(expected[1], unset);
    }
    const flagText = `${option.flag}=${asText(flagValue)}`;
    const all = loadConfig({
      argv: [flagText, ...settingsArgv],
      env: { ...baseEnv, [option.env]: asText(envValue) },
    });
    t.deepEqual(c.read(all), expected[0], 'flag wins');

    const envOnly = loadConfig({ argv: settingsArgv, env: { ...baseEnv, [option.env]: asText(envValue) } });
    t.deepEqual(c.read(envOnly), expected[1], 'env beats the settings file');

    if (settings !== undefined) {
      const fileOnly = loadConfig({ argv: settingsArgv, env: baseEnv });
      t.deepEqual(c.read(fileOnly), expected[2], 'settings file beats the default');
    }

    // With a companion alone the configuration is refused (tested in errors.test.ts).
    if (c.companions === undefined) {
      const none = loadConfig({ argv: [], env: baseEnv });
      t.deepEqual(c.read(none), unset, 'default');
    }
  });

  if (option.type !== 'boolean') {
    test(`${option.flag}: the separate-value form equals the = form`, (t) => {
      const config = loadConfig({
        argv: [option.flag, asText(flagValue), ...(c.companions ?? [])],
        env: baseEnv,
      });
      t.deepEqual(c.read(config), expected[0]);
    });
  }
}

test('booleans: a bare flag means true, env takes exactly true/false', (t) => {
  const bare = loadConfig({ argv: ['--build-no-cache', '--allow-insecure-git-protocols'], env: baseEnv });
  t.true(bare.build.noCache);
  t.true(bare.git.allowInsecureProtocols);
  const env = loadConfig({
    argv: [],
    env: { ...baseEnv, BUILD_NO_CACHE: 'true', ALLOW_INSECURE_GIT_PROTOCOLS: 'false' },
  });
  t.true(env.build.noCache);
  t.false(env.git.allowInsecureProtocols);
});

test('lists drop empty items and trim; an empty env value means unset', (t) => {
  const config = loadConfig({
    argv: ['--insecure-registries', ',a:5000,, b:5001 ,'],
    env: { ...baseEnv, BUILD_PLATFORMS: 'linux/amd64,,', DEPLOYMENT_ENVIRONMENT: '', SERVICE_NAME: '' },
  });
  t.deepEqual(config.insecureRegistries, ['a:5000', 'b:5001']);
  t.deepEqual(config.build.platforms, ['linux/amd64']);
  t.is(config.observability.environment, 'development');
  t.is(config.observability.serviceName, 'service-builder');
});

test('the defaults are the contract table, and derived fields come from the environment', (t) => {
  const config = loadConfig({ argv: [], env: { ...baseEnv, PATH: '/x/bin', SECRET_THING: 'nope' } });
  t.deepEqual(
    { ...config, childEnv: undefined, version: undefined },
    {
      service: { port: 8080, shutdownGraceSeconds: 290 },
      builders: [],
      builderName: 'service-remote',
      sshHostKeyPolicy: 'tofu',
      insecureRegistries: [],
      git: { allowInsecureProtocols: false },
      gitCredentials: [],
      registryMappingRules: [],
      auth: {
        mode: 'off',
        issuers: [],
        tokens: [],
        rules: [],
        browser: { scopes: ['openid', 'email', 'profile'], sessionHours: 8 },
      },
      events: { subscriptions: [], retrySeconds: [5, 300, 1800, 7200, 18000, 36000, 36000] },
      build: {
        platforms: [],
        noCache: false,
        mode: 'auto',
        cloneTimeoutSeconds: 600,
        compression: 'gzip',
        timeoutSeconds: 3600,
        maxConcurrent: 4,
        maxPerBuilder: 0,
        maxQueued: 200,
        maxQueuedPrebuilds: 10_000,
        quotas: [],
        nativePlatformsOnly: false,
        reuse: true,
        provenance: 'min',
        provenanceBuilderId: 'urn:image-build-service:builder',
        sbom: false,
        history: 1000,
        historyDays: 30,
      },
      observability: { serviceName: 'service-builder', environment: 'development' },
      errorTracking: {},
      logs: { retention: 10 },
      redis: { clusterNodes: [], sentinels: [], tls: false },
      retention: {
        mode: 'off',
        keepPerBranch: 2,
        keepServedDays: 30,
        keepTags: [],
        intervalMinutes: 60,
        repositories: [],
      },
      usage: { retentionDays: 400, metricTenants: [] },
      prebuilds: {
        configurations: [],
        reconcileIntervalSeconds: 300,
        refreshIntervalSeconds: 21600,
        hookSecrets: {},
      },
      scratchDir: join(dir, 'image-build-service'),
      dockerConfigDir: dockerDir,
      registryAuth: { auths: {} },
      childEnv: undefined,
      version: undefined,
    },
  );
  t.regex(config.version, /^\d+\.\d+\.\d+/);
  t.deepEqual(config.childEnv, { PATH: '/x/bin' });
});

test('without DOCKER_CONFIG the docker config dir is ~/.docker', (t) => {
  const config = loadConfig({ argv: [], env: { HOME: dir } });
  t.is(config.dockerConfigDir, join(dir, '.docker'));
});

test('the loaded configuration is deep-frozen', (t) => {
  const config = loadConfig({
    argv: ['--git-credentials-config-path', CASES.gitCredentialsConfigPath.values[0] as string],
    env: { ...baseEnv, BUILD_PLATFORMS: 'linux/amd64' },
  });
  t.true(Object.isFrozen(config));
  t.true(Object.isFrozen(config.build));
  t.true(Object.isFrozen(config.build.platforms));
  t.true(Object.isFrozen(config.gitCredentials[0]));
  t.true(Object.isFrozen(config.childEnv));
  t.throws(() => {
    (config.build.platforms as string[]).push('linux/386');
  });
});
