import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../../src/config/load.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { dir, baseEnv, file } = configScratch('ibs-config-files-');
const KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n-----END OPENSSH PRIVATE KEY-----\n';

const SETTINGS_YAML = `
builder:
  endpoint: tcp://127.0.0.1:1234
service:
  port: 9001
sshHostKeyPolicy: pinned
insecureRegistries: [r1:5000, r2:5000]
git:
  allowInsecureProtocols: true
build:
  platforms: [linux/amd64]
  noCache: true
  cacheFrom: type=registry,ref=r1:5000/cache
  mode: never
  cloneTimeoutSeconds: 60
  timeoutSeconds: 120
  maxConcurrent: 2
  fallbackImage: r1:5000/base:1
observability:
  serviceName: svc
  environment: staging
errorTracking:
  dsn: https://key@errors.example/1
logs:
  retention: 3
gitCredentials:
  entries:
    - host: git.example
      kind: https
      username: ci
      token: tok
    - host: 127.0.0.1
      port: 2222
      kind: ssh
      privateKey: |
${KEY.split('\n')
  .map((l) => `        ${l}`)
  .join('\n')}
      pinnedHostKey: "[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF"
registryMapping:
  rules:
    - registry: r1:5000
      hostMatch: git.example
      pathPrefix: team/
    - registry: r2:5000
`;

test('a YAML settings file sets every nested key', (t) => {
  const config = loadConfig({ argv: ['--settings', file('.yaml', SETTINGS_YAML)], env: baseEnv });
  t.like(config, {
    builders: [{ endpoint: 'tcp://127.0.0.1:1234', platforms: [] }],
    service: { port: 9001 },
    sshHostKeyPolicy: 'pinned',
    insecureRegistries: ['r1:5000', 'r2:5000'],
    git: { allowInsecureProtocols: true },
    build: {
      platforms: ['linux/amd64'],
      noCache: true,
      cacheFrom: 'type=registry,ref=r1:5000/cache',
      mode: 'never',
      cloneTimeoutSeconds: 60,
      timeoutSeconds: 120,
      maxConcurrent: 2,
      fallbackImage: 'r1:5000/base:1',
    },
    observability: { serviceName: 'svc', environment: 'staging' },
    errorTracking: { dsn: 'https://key@errors.example/1' },
    logs: { retention: 3 },
  });
  t.deepEqual(config.gitCredentials, [
    { host: 'git.example', kind: 'https', username: 'ci', token: 'tok' },
    {
      host: '127.0.0.1',
      port: 2222,
      kind: 'ssh',
      privateKey: KEY,
      pinnedHostKey: '[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF',
    },
  ]);
  t.deepEqual(config.registryMappingRules, [
    { registry: 'r1:5000', hostMatch: 'git.example', pathPrefix: 'team/' },
    { registry: 'r2:5000' },
  ]);
});

test('the same settings as JSON load the same configuration', (t) => {
  const settings = {
    service: { port: 9002 },
    build: { platforms: ['linux/386'], mode: 'never' },
    gitCredentials: { entries: [{ host: 'h', kind: 'https', username: 'u', token: 't' }] },
  };
  const config = loadConfig({
    argv: [],
    env: { ...baseEnv, SERVICE_CONFIG_PATH: file('.json', JSON.stringify(settings)) },
  });
  t.is(config.service.port, 9002);
  t.deepEqual(config.build.platforms, ['linux/386']);
  t.is(config.gitCredentials.length, 1);
});

test('an empty YAML settings file sets nothing', (t) => {
  const config = loadConfig({ argv: ['--settings', file('.yml', '# nothing\n')], env: baseEnv });
  t.is(config.service.port, 8080);
});

test('the git credentials file replaces the settings file entries', (t) => {
  const settings = file('.yaml', SETTINGS_YAML);
  const creds = file(
    '.yaml',
    `- host: other.example\n  kind: ssh\n  privateKey: |\n${KEY.split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}\n`,
  );
  const config = loadConfig({
    argv: ['--settings', settings],
    env: { ...baseEnv, GIT_CREDENTIALS_CONFIG_PATH: creds },
  });
  t.deepEqual(config.gitCredentials, [{ host: 'other.example', kind: 'ssh', privateKey: KEY }]);
  // The mapping rules still come from the settings file.
  t.is(config.registryMappingRules.length, 2);
});

test('the registry mapping file replaces the settings file rules', (t) => {
  const settings = file('.yaml', SETTINGS_YAML);
  const rules = file('.json', JSON.stringify([{ registry: 'r9:5000', pathPrefix: 'x/' }]));
  const config = loadConfig({
    argv: ['--settings', settings, '--registry-mapping-config-path', rules],
    env: baseEnv,
  });
  t.deepEqual(config.registryMappingRules, [{ registry: 'r9:5000', pathPrefix: 'x/' }]);
  t.is(config.gitCredentials.length, 2);
});

test('an empty entries file is an empty list', (t) => {
  const config = loadConfig({ argv: ['--git-credentials-config-path', file('.json', '[]')], env: baseEnv });
  t.deepEqual(config.gitCredentials, []);
});

test('ambient registry auth comes from $DOCKER_CONFIG/config.json; a missing file means no auths', (t) => {
  const dockerDir = join(dir, 'docker-ok');
  mkdirSync(dockerDir);
  const auth = Buffer.from('user:pa55').toString('base64');
  writeFileSync(
    join(dockerDir, 'config.json'),
    JSON.stringify({
      auths: { 'r1:5000': { auth }, 'https://index.docker.io/v1/': { auth } },
      credsStore: 'desktop',
    }),
  );
  const config = loadConfig({ argv: [], env: { ...baseEnv, DOCKER_CONFIG: dockerDir } });
  t.is(config.dockerConfigDir, dockerDir);
  t.deepEqual(config.registryAuth, {
    auths: { 'r1:5000': { auth }, 'https://index.docker.io/v1/': { auth } },
  });

  const none = loadConfig({ argv: [], env: { ...baseEnv, DOCKER_CONFIG: join(dir, 'nowhere') } });
  t.deepEqual(none.registryAuth, { auths: {} });

  const home = join(dir, 'home');
  mkdirSync(join(home, '.docker'), { recursive: true });
  writeFileSync(join(home, '.docker', 'config.json'), JSON.stringify({ auths: { 'r3:1': { auth } } }));
  const fromHome = loadConfig({ argv: [], env: { HOME: home } });
  t.deepEqual(Object.keys(fromHome.registryAuth.auths), ['r3:1']);
});

const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOjUD6Pm6dp2FRAA2vwNwtqBiOvPUxIW5kFj0R9Z2O8s';
for (const [title, pinnedHostKey] of [
  ['a bare key', ED25519],
  ['a known_hosts line', `[127.0.0.1]:2222 ${ED25519}`],
  ['a known_hosts line with a trailing comment', `git.example ${ED25519} root@git-server`],
  ['a bare key with a comment of several words', `${ED25519} pinned by ops, 2026`],
  [
    'several lines, a # comment line and a blank line',
    `# the server\n\ngit.example ${ED25519} a\n${ED25519}\n`,
  ],
  ['a @cert-authority line', `@cert-authority *.example ${ED25519} ca`],
] as const) {
  test(`pinnedHostKey accepted: ${title}`, (t) => {
    const entries = [{ host: 'git.example', kind: 'ssh', privateKey: KEY, pinnedHostKey }];
    const config = loadConfig({
      argv: ['--git-credentials-config-path', file('.json', JSON.stringify(entries))],
      env: baseEnv,
    });
    t.is(
      config.gitCredentials[0]?.kind === 'ssh' ? config.gitCredentials[0].pinnedHostKey : '',
      pinnedHostKey,
    );
  });
}

for (const [title, pinnedHostKey] of [
  ['no key', 'git.example'],
  ['no key type', 'git.example AAAAC3NzaC1lZDI1NTE5'],
  ['a key that is not base64', 'git.example ssh-ed25519 not-base64!'],
  ['a word that is no key type', 'host notakey AAAA comment'],
  ['only comments', '# nothing here\n'],
  ['an unknown marker', `@trusted git.example ${ED25519}`],
  ['one good line and one bad', `${ED25519}\nrubbish`],
] as const) {
  test(`pinnedHostKey refused at startup: ${title}`, (t) => {
    const entries = [{ host: 'git.example', kind: 'ssh', privateKey: KEY, pinnedHostKey }];
    const error = t.throws(() =>
      loadConfig({
        argv: ['--git-credentials-config-path', file('.json', JSON.stringify(entries))],
        env: baseEnv,
      }),
    );
    t.regex(error?.message ?? '', /pinnedHostKey: must be known_hosts lines/);
  });
}

test('a registry mapping rule may name a registry with a namespace path', (t) => {
  const rules = [{ registry: 'localhost:5000/team', pathPrefix: 'team/' }, { registry: 'ghcr.io/org/sub' }];
  const config = loadConfig({
    argv: ['--registry-mapping-config-path', file('.json', JSON.stringify(rules))],
    env: baseEnv,
  });
  t.deepEqual(config.registryMappingRules, rules);
});
