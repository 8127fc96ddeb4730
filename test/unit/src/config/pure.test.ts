import test from 'ava';
import { parseArgv } from '../../../../src/config/argv.js';
import { childEnvironment, DEFAULT_PATH } from '../../../../src/config/child-env.js';
import { optionByName } from '../../../../src/config/options.js';
import { matchRegistryRule } from '../../../../src/config/registry-mapping.js';
import { pointerToPath } from '../../../../src/config/ajv-problems.js';
import { valueFromText } from '../../../../src/config/text-values.js';
import type { RegistryMappingRule } from '../../../../src/config/types.js';

const RULES: RegistryMappingRule[] = [
  { registry: 'team-reg', hostMatch: 'git.example', pathPrefix: 'team/' },
  { registry: 'host-reg', hostMatch: 'GIT.example' },
  { registry: 'path-reg', pathPrefix: 'shared/' },
  { registry: 'catch-all' },
];

for (const [host, path, expected] of [
  ['git.example', '/team/app.git', 'team-reg'],
  ['git.example', 'team/app', 'team-reg'],
  ['Git.Example', '/team/app', 'team-reg'],
  ['git.example', '/teams/app', 'host-reg'],
  ['git.example', '/other/app', 'host-reg'],
  ['gitlab.example', '/team/app', 'catch-all'],
  ['gitlab.example', '/shared/lib', 'path-reg'],
  ['git.example.org', '/team/app', 'catch-all'],
  ['gitlab.example', '/Shared/lib', 'catch-all'],
] as const) {
  test(`registry mapping: ${host}${path} -> ${expected}`, (t) => {
    t.is(matchRegistryRule(RULES, host, path)?.registry, expected);
  });
}

test('registry mapping: no rule matches -> undefined; first match wins', (t) => {
  t.is(matchRegistryRule(RULES.slice(0, 2), 'elsewhere', '/x'), undefined);
  t.is(matchRegistryRule([], 'h', '/x'), undefined);
  t.is(matchRegistryRule([{ registry: 'a' }, { registry: 'b' }], 'h', '/x')?.registry, 'a');
  t.is(matchRegistryRule([{ registry: 'a', pathPrefix: '/team/' }], 'h', '/team/x')?.registry, 'a');
});

for (const [argv, values, problems] of [
  [['--port', '1'], { port: '1' }, []],
  [['--port=1'], { port: '1' }, []],
  [['--port=1', '--port', '2'], { port: '2' }, []],
  [['--build-no-cache'], { buildNoCache: 'true' }, []],
  [['--build-no-cache=false'], { buildNoCache: 'false' }, []],
  [
    ['--build-no-cache', 'false'],
    { buildNoCache: 'true' },
    ['unexpected argument "false" (options are --flag value or --flag=value)'],
  ],
  [['--fallback-image='], { fallbackImage: '' }, []],
  [['--port', '--builder-name', 'x'], { builderName: 'x' }, ['--port: missing value']],
  [['--port=-1'], { port: '-1' }, []],
  [['--port', '-1'], { port: '-1' }, []],
  [
    ['-p', '1'],
    {},
    [
      'unexpected argument "-p" (options are --flag value or --flag=value)',
      'unexpected argument "1" (options are --flag value or --flag=value)',
    ],
  ],
  [['--nope=1', '--port', '3'], { port: '3' }, ['unknown option --nope (see --help)']],
] as const) {
  test(`argv: ${argv.join(' ')}`, (t) => {
    const parsed = parseArgv(argv);
    t.deepEqual(Object.fromEntries(parsed.values), values);
    t.deepEqual(parsed.problems, problems);
  });
}

test('argv: --help, -h and --version are actions, not options', (t) => {
  t.true(parseArgv(['--port', '1', '-h']).help);
  t.true(parseArgv(['--help']).help);
  t.true(parseArgv(['--version']).version);
  t.false(parseArgv(['--port', '1']).help);
});

for (const [name, text, expected] of [
  ['buildNoCache', 'true', { ok: true, value: true }],
  ['buildNoCache', 'false', { ok: true, value: false }],
  ['buildNoCache', 'True', { ok: false, problem: 'must be true or false' }],
  ['buildNoCache', '1', { ok: false, problem: 'must be true or false' }],
  ['buildNoCache', '', { ok: false, problem: 'must be true or false' }],
  ['port', '08080', { ok: true, value: 8080 }],
  ['port', '+1', { ok: true, value: 1 }],
  ['port', '1e3', { ok: false, problem: 'must be an integer' }],
  ['port', ' 1', { ok: false, problem: 'must be an integer' }],
  ['port', '', { ok: false, problem: 'must be an integer' }],
  ['buildPlatforms', 'linux/amd64, linux/386 ,,', { ok: true, value: ['linux/amd64', 'linux/386'] }],
  ['buildPlatforms', '', { ok: true, value: [] }],
  ['fallbackImage', '', { ok: true, value: undefined }],
  ['builderName', '', { ok: true, value: '' }],
] as const) {
  test(`text value: ${name} ${JSON.stringify(text)}`, (t) => {
    t.deepEqual(valueFromText(optionByName(name), text), expected);
  });
}

test('child env: only the allowlist passes, PATH always set', (t) => {
  const env = {
    PATH: '/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C',
    TZ: 'UTC',
    SSL_CERT_FILE: '/a',
    SSL_CERT_DIR: '/b',
    NODE_EXTRA_CA_CERTS: '/c',
    GIT_SSL_CAINFO: '/d',
    HTTP_PROXY: 'h',
    HTTPS_PROXY: 'hs',
    NO_PROXY: 'n',
    http_proxy: 'h2',
    https_proxy: 'hs2',
    no_proxy: 'n2',
    XDG_RUNTIME_DIR: '/run/user/0',
    HOME: '/root',
    ERROR_TRACKING_DSN: 'https://secret@x/1',
    REGISTRY_PASSWORD: 'p',
    GIT_ASKPASS: '/x',
    SSH_AUTH_SOCK: '/s',
    DOCKER_CONFIG: '/dc',
    NODE_OPTIONS: '--x',
    LCX: 'no',
    UNDEF: undefined,
  };
  const {
    HOME: _h,
    ERROR_TRACKING_DSN: _e,
    REGISTRY_PASSWORD: _r,
    GIT_ASKPASS: _g,
    SSH_AUTH_SOCK: _s,
    DOCKER_CONFIG: _d,
    NODE_OPTIONS: _n,
    LCX: _l,
    UNDEF: _u,
    ...allowed
  } = env;
  t.deepEqual(childEnvironment(env), allowed);
  t.deepEqual(childEnvironment({}), { PATH: DEFAULT_PATH });
});

for (const [pointer, path] of [
  ['', ''],
  ['/service/port', 'service.port'],
  ['/build/platforms/1', 'build.platforms[1]'],
  ['/0/token', '[0].token'],
  ['/auths/a~1b', 'auths.a/b'],
] as const) {
  test(`json pointer ${JSON.stringify(pointer)} -> ${JSON.stringify(path)}`, (t) => {
    t.is(pointerToPath(pointer), path);
  });
}
