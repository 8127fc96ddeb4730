import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { dir, baseEnv, file, problemsOf } = configScratch('ibs-config-errors-');

const SECRET_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nS3CRET-KEY-MATERIAL\n-----END OPENSSH PRIVATE KEY-----\n';

const CASES: readonly {
  title: string;
  argv?: string[];
  env?: Record<string, string>;
  problem: RegExp;
  count?: number;
}[] = [
  { title: 'unknown flag', argv: ['--prot', '1'], problem: /^unknown option --prot/ },
  { title: 'positional argument', argv: ['serve'], problem: /unexpected argument "serve"/ },
  { title: 'flag without value', argv: ['--port'], problem: /^--port: missing value/ },
  {
    title: 'bad number (flag)',
    argv: ['--port', 'eighty'],
    problem: /^--port: must be an integer \(got "eighty"\)/,
  },
  {
    title: 'bad number (env)',
    env: { CLONE_TIMEOUT_SECONDS: '1.5' },
    problem: /^CLONE_TIMEOUT_SECONDS: must be an integer/,
  },
  { title: 'port out of range (high)', argv: ['--port=65536'], problem: /^--port: must be <= 65535/ },
  { title: 'port out of range (negative)', env: { PORT: '-1' }, problem: /^PORT: must be >= 0/ },
  {
    title: 'listen address with a scheme',
    argv: ['--host', 'http://127.0.0.1'],
    problem: /^--host: must be an IP address or host name/,
  },
  {
    title: 'zero timeout',
    env: { BUILD_TIMEOUT_SECONDS: '0' },
    problem: /^BUILD_TIMEOUT_SECONDS: must be >= 1/,
  },
  {
    title: 'negative clone timeout',
    argv: ['--clone-timeout=-5'],
    problem: /^--clone-timeout: must be >= 1/,
  },
  { title: 'negative concurrency', argv: ['--max-concurrent-builds=-1'], problem: /must be >= 0/ },
  {
    title: 'zero retention',
    env: { COMMAND_LOG_RETENTION: '0' },
    problem: /^COMMAND_LOG_RETENTION: must be >= 1/,
  },
  {
    title: 'bad enum (flag)',
    argv: ['--ssh-host-key-policy', 'trust'],
    problem: /must be one of tofu, pinned \(got "trust"\)/,
  },
  {
    title: 'bad enum (env)',
    env: { BUILDER_MODE: 'always' },
    problem: /^BUILDER_MODE: must be one of auto, never/,
  },
  {
    title: 'env boolean other than true/false',
    env: { BUILD_NO_CACHE: '1' },
    problem: /^BUILD_NO_CACHE: must be true or false/,
  },
  {
    title: 'flag boolean other than true/false',
    argv: ['--build-no-cache=yes'],
    problem: /must be true or false/,
  },
  {
    title: 'bad platform',
    env: { BUILD_PLATFORMS: 'linux/amd64,Linux' },
    problem: /^BUILD_PLATFORMS: \[1\]: must be os\/arch/,
  },
  {
    title: 'cache type not allowed',
    argv: ['--build-cache-to', 'type=s3,bucket=b'],
    problem: /cache type "s3" is not allowed/,
  },
  {
    title: 'cache spec with a space after a comma',
    env: { BUILD_CACHE_TO: 'type=registry, ref=r/c' },
    problem: /^BUILD_CACHE_TO: must be a reference or comma-separated key=value fields/,
  },
  {
    title: 'builder endpoint not a URL',
    argv: ['--builder-endpoint', '127.0.0.1:1234'],
    problem: /must be a URL such as tcp/,
  },
  { title: 'empty required string', argv: ['--builder-name='], problem: /^--builder-name: must be letters/ },
  {
    title: 'settings file: bad extension',
    argv: ['--settings', file('.toml', 'a=1')],
    problem: /unsupported extension "\.toml"/,
  },
  {
    title: 'settings file: missing',
    argv: ['--settings', join(dir, 'absent.yaml')],
    problem: /cannot be read \(ENOENT\)/,
  },
  {
    title: 'settings file: a directory',
    env: { SERVICE_CONFIG_PATH: (mkdirSync(join(dir, 'd.json')), join(dir, 'd.json')) },
    problem: /cannot be read \(EISDIR\)/,
  },
  {
    title: 'settings file: invalid JSON',
    argv: ['--settings', file('.json', '{"service": {')],
    problem: /not valid JSON/,
  },
  {
    title: 'settings file: invalid YAML',
    argv: ['--settings', file('.yml', 'service: [1,\n')],
    problem: /not valid YAML \(line/,
  },
  {
    title: 'settings file: not a mapping',
    argv: ['--settings', file('.json', '[1]')],
    problem: /must be a mapping/,
  },
  {
    title: 'settings file: unknown key',
    argv: ['--settings', file('.yaml', 'service:\n  prot: 1\n')],
    problem: /unknown key "service\.prot"/,
  },
  {
    title: 'settings file: unknown top-level key',
    argv: ['--settings', file('.json', '{"builderName": "x"}')],
    problem: /unknown key "builderName"/,
  },
  {
    title: 'settings file: wrong type',
    argv: ['--settings', file('.yaml', 'service:\n  port: "80"\n')],
    problem: /service\.port: must be an integer \(got "80"\)/,
  },
  {
    title: 'settings file: bad enum',
    argv: ['--settings', file('.yaml', 'build:\n  mode: sometimes\n')],
    problem: /build\.mode: must be one of auto, never/,
  },
  {
    title: 'settings file: zero timeout',
    argv: ['--settings', file('.json', '{"build": {"timeoutSeconds": 0}}')],
    problem: /build\.timeoutSeconds: must be >= 1/,
  },
  {
    title: 'settings file: bad cache type',
    argv: ['--settings', file('.json', '{"build": {"cacheFrom": "type=local,src=/x"}}')],
    problem: /build\.cacheFrom: cache type "local" is not allowed/,
  },
  {
    title: 'settings file: checked whole, also where a flag overrides it',
    argv: [
      '--build-cache-from=type=gha',
      '--port=1',
      '--settings',
      file('.json', '{"build": {"cacheFrom": "type=local,src=/x"}, "service": {"port": 0.5}}'),
    ],
    problem: /build\.cacheFrom: cache type "local" is not allowed|service\.port: must be an integer/,
    count: 2,
  },
  {
    title: 'credentials file: https entry without token',
    argv: [
      '--git-credentials-config-path',
      file('.json', '[{"host": "h", "kind": "https", "username": "u"}]'),
    ],
    problem: /git credentials file .*: \[0\]: missing required key "token"/,
  },
  {
    title: 'credentials file: ssh entry without key',
    env: { GIT_CREDENTIALS_CONFIG_PATH: file('.yaml', '- host: h\n  kind: ssh\n') },
    problem: /\[0\]: missing required key "privateKey"/,
  },
  {
    title: 'credentials file: unknown kind',
    env: { GIT_CREDENTIALS_CONFIG_PATH: file('.yaml', '- host: h\n  kind: ftp\n') },
    problem: /\[0\]\.kind: must be one of https, ssh/,
  },
  {
    title: 'credentials file: unknown field',
    env: {
      GIT_CREDENTIALS_CONFIG_PATH: file(
        '.json',
        '[{"host": "h", "kind": "https", "username": "u", "token": "t", "passwd": "x"}]',
      ),
    },
    problem: /unknown key "\[0\]\.passwd"/,
  },
  {
    title: 'credentials file: port out of range',
    env: {
      GIT_CREDENTIALS_CONFIG_PATH: file(
        '.json',
        '[{"host": "h", "port": 0, "kind": "https", "username": "u", "token": "t"}]',
      ),
    },
    problem: /\[0\]\.port: must be >= 1/,
  },
  {
    title: 'credentials file: host with scheme',
    env: {
      GIT_CREDENTIALS_CONFIG_PATH: file(
        '.json',
        '[{"host": "https://h", "kind": "https", "username": "u", "token": "t"}]',
      ),
    },
    problem: /\[0\]\.host: must be a host name/,
  },
  {
    title: 'credentials file: not an array',
    env: { GIT_CREDENTIALS_CONFIG_PATH: file('.json', '{"entries": []}') },
    problem: /must be a list/,
  },
  {
    title: 'credentials file: key path instead of key text',
    env: {
      GIT_CREDENTIALS_CONFIG_PATH: file(
        '.json',
        '[{"host": "h", "kind": "ssh", "privateKey": "/root/.ssh/id_ed25519"}]',
      ),
    },
    problem: /privateKey: must be the text of a PEM\/OpenSSH private key/,
  },
  {
    title: 'credentials file: duplicate host/kind/port',
    env: {
      GIT_CREDENTIALS_CONFIG_PATH: file(
        '.json',
        JSON.stringify([
          { host: 'H', kind: 'https', username: 'u', token: 't' },
          { host: 'h', port: 443, kind: 'https', username: 'u', token: 't' },
          { host: 'h', kind: 'https', username: 'v', token: 'w' },
        ]),
      ),
    },
    problem: /git credentials file .*: \[2\]: duplicate of entry \[0\] \(host "h", kind https\)/,
  },
  {
    title: 'settings file: duplicate credential entries',
    argv: [
      '--settings',
      file(
        '.yaml',
        'gitCredentials:\n  entries:\n    - {host: h, kind: https, username: u, token: t}\n    - {host: h, kind: https, username: u, token: t}\n',
      ),
    ],
    problem: /settings file .*: gitCredentials\.entries\[1\]: duplicate of entry \[0\]/,
  },
  {
    title: 'mapping file: rule without registry',
    env: { REGISTRY_MAPPING_CONFIG_PATH: file('.json', '[{"hostMatch": "h"}]') },
    problem: /registry mapping file .*: \[0\]: missing required key "registry"/,
  },
  {
    title: 'mapping file: a registry outside the reference grammar',
    env: { REGISTRY_MAPPING_CONFIG_PATH: file('.json', '[{"registry": "https://r.example/Team"}]') },
    problem: /\[0\]\.registry: must be a registry host\[:port\], optionally followed by a namespace path/,
  },
  {
    title: 'mapping file: unknown field',
    env: { REGISTRY_MAPPING_CONFIG_PATH: file('.yaml', '- registry: r\n  host: h\n') },
    problem: /unknown key "\[0\]\.host"/,
  },
  {
    title: 'docker config: invalid JSON',
    env: {
      DOCKER_CONFIG:
        (mkdirSync(join(dir, 'dc1')),
        writeFileSync(join(dir, 'dc1', 'config.json'), '{"auths": '),
        join(dir, 'dc1')),
    },
    problem: /^docker config .*config\.json: not valid JSON/,
  },
  {
    title: 'docker config: auth not base64 user:password',
    env: {
      DOCKER_CONFIG:
        (mkdirSync(join(dir, 'dc2')),
        writeFileSync(join(dir, 'dc2', 'config.json'), '{"auths": {"r": {"auth": "bm9jb2xvbg=="}}}'),
        join(dir, 'dc2')),
    },
    problem: /auths\["r"\]\.auth must be base64 of "username:password"/,
  },
];

for (const c of CASES) {
  test(`startup error: ${c.title}`, (t) => {
    const problems = problemsOf(c.argv ?? [], c.env ?? {});
    t.is(problems.length, c.count ?? 1, problems.join('\n'));
    for (const problem of problems) t.regex(problem, c.problem);
  });
}

test('every problem is reported at once', (t) => {
  const settings = file('.yaml', 'service:\n  port: 99999\nbogus: 1\nbuild:\n  mode: x\n');
  const problems = problemsOf(['--settings', settings, '--clone-timeout=0', '--nope'], {
    SSH_HOST_KEY_POLICY: 'maybe',
    BUILD_NO_CACHE: 'TRUE',
  });
  const expected = [
    /--nope/,
    /service\.port/,
    /"bogus"/,
    /build\.mode/,
    /--clone-timeout/,
    /SSH_HOST_KEY_POLICY/,
    /BUILD_NO_CACHE/,
  ];
  t.is(problems.length, expected.length, problems.join('\n'));
  for (const re of expected)
    t.true(
      problems.some((p) => re.test(p)),
      String(re),
    );
});

test('the error message lists every problem under "configuration error:"', (t) => {
  const err = t.throws(() => loadConfig({ argv: ['--port=x', '--builder-mode=y'], env: baseEnv }), {
    instanceOf: ConfigError,
  });
  t.regex(err?.message ?? '', /^configuration error:\n {2}- .*--port.*\n {2}- .*--builder-mode/);
});

test('secrets never appear in problems', (t) => {
  const settings = file(
    '.yaml',
    [
      'errorTracking:',
      '  dsn: "ftp://S3CRET-DSN@host/1"',
      'gitCredentials:',
      '  entries:',
      '    - {host: a, kind: https, username: u, token: S3CRET-TOKEN, privateKey: S3CRET-PK}',
      '    - {host: b, kind: ssh, privateKey: S3CRET-BAD-KEY, token: 42}',
      '    - {host: c, kind: https, username: u, token: 17}',
    ].join('\n'),
  );
  const creds = file(
    '.json',
    JSON.stringify([{ host: 'x', kind: 'ssh', privateKey: SECRET_KEY, pinnedHostKey: 'S3CRET not a key' }]),
  );
  const problems = problemsOf(['--settings', settings, '--error-tracking-dsn', 'not a url S3CRET'], {
    GIT_CREDENTIALS_CONFIG_PATH: creds,
  });
  t.true(problems.length >= 5, problems.join('\n'));
  t.false(problems.join('\n').includes('S3CRET'), problems.join('\n'));

  const settingsDsn = file('.json', JSON.stringify({ errorTracking: { dsn: 'mailto:S3CRET' } }));
  const more = problemsOf(['--settings', settingsDsn]);
  t.is(more.length, 1);
  t.false(more.join('\n').includes('S3CRET'));
});

test('an invalid value in a lower source that a higher one overrides is not an error', (t) => {
  t.notThrows(() => loadConfig({ argv: ['--port', '9000'], env: { ...baseEnv, PORT: 'abc' } }));
});

const REDIS_URL_CASES: readonly { title: string; argv?: string[]; env?: Record<string, string> }[] = [
  { title: 'an http URL', argv: ['--redis-url', 'http://:pw-CANARY-1@redis.example:6379'] },
  { title: 'a URL without host', env: { REDIS_URL: 'redis://:pw-CANARY-1@' } },
  { title: 'a non-numeric database', env: { REDIS_URL: 'redis://:pw-CANARY-1@redis.example/cache' } },
  { title: 'not a URL', env: { REDIS_URL: 'pw-CANARY-1' } },
];
for (const c of REDIS_URL_CASES) {
  test(`Redis URL: ${c.title} is refused at startup without echoing the password`, (t) => {
    const problems = problemsOf(c.argv ?? [], c.env ?? {});
    t.is(problems.length, 1);
    t.regex(problems[0] ?? '', /(--redis-url|REDIS_URL): must be a redis:\/\/ or rediss:\/\/ URL/);
    t.false(problems.join('\n').includes('CANARY'));
  });
}

test('Redis URL: redis:// and rediss:// URLs are accepted', (t) => {
  for (const url of ['redis://127.0.0.1', 'rediss://u:p@redis.example:6380/2', 'redis://:p@[::1]:6379/0']) {
    t.deepEqual(problemsOf(['--redis-url', url]), [], url);
  }
});
