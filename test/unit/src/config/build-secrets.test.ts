// The server's build secrets file (src/config/build-secrets.ts) as loadConfig reads it: a bad
// entry stops startup naming the entry by id and never echoing its value; an unscoped entry is
// refused; `file` is read at startup; the settings file's buildSecrets.entries is the fallback.
import test from 'ava';
import type { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';
import { effectiveConfigView } from '../../../../src/config/view.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const scratch = configScratch('ibs-build-secrets-');
const { baseEnv, file } = scratch;
const CANARY = 'CANARY-build-secret-value-5b1f';
const SCOPE = [{ host: 'git.example.com', pathPrefix: 'team/' }];

const problemsOf = (entries: unknown): string[] =>
  scratch.problemsOf(['--build-secrets-config-path', file('.json', JSON.stringify(entries))]);

const BAD: readonly [string, unknown, RegExp][] = [
  [
    'an entry without repositories',
    [{ id: 'npmrc', value: CANARY }],
    /entry "npmrc": no repositories: .*refused/,
  ],
  [
    'an empty scope list',
    [{ id: 'npmrc', value: CANARY, repositories: [] }],
    /entry "npmrc": no repositories/,
  ],
  ['a bad id', [{ id: '-x', value: CANARY, repositories: SCOPE }], /entry 1: id must be 1 to 64 characters/],
  [
    'value and file',
    [{ id: 'a', value: CANARY, file: '/x', repositories: SCOPE }],
    /entry "a": give exactly one/,
  ],
  [
    'neither value nor file',
    [{ id: 'a', repositories: SCOPE }],
    /entry "a": give exactly one of value and file/,
  ],
  [
    'a value not a string',
    [{ id: 'a', value: 42, repositories: SCOPE }],
    /entry "a": value must be a string/,
  ],
  [
    'a value over 64 KiB',
    [{ id: 'big', value: `${CANARY}${'x'.repeat(65_536)}`, repositories: SCOPE }],
    /entry "big": the value is larger than 65536 bytes/,
  ],
  [
    'a relative file',
    [{ id: 'a', file: 'npmrc', repositories: SCOPE }],
    /entry "a": file must be an absolute path/,
  ],
  [
    'a missing file',
    [{ id: 'a', file: '/nonexistent/npmrc', repositories: SCOPE }],
    /cannot be read \(ENOENT\)/,
  ],
  [
    'a host with a port',
    [{ id: 'a', value: CANARY, repositories: [{ host: 'git.example.com:443' }] }],
    /entry "a": repositories\[0\]\.host must be a host name/,
  ],
  [
    'a path prefix with a leading slash',
    [{ id: 'a', value: CANARY, repositories: [{ host: 'h', pathPrefix: '/team' }] }],
    /repositories\[0\]\.pathPrefix must be .*without a leading/,
  ],
  [
    'an unknown key',
    [{ id: 'a', value: CANARY, repositories: SCOPE, scope: 1 }],
    /entry "a": unknown key "scope"/,
  ],
  ['not a list', { id: 'a', value: CANARY }, /must be a list of/],
];

for (const [title, entries, problem] of BAD) {
  test(`startup stops on ${title}, naming the entry and never its value`, (t) => {
    const problems = problemsOf(entries);
    t.true(
      problems.some((p) => problem.test(p)),
      problems.join('\n'),
    );
    t.true(problems.every((p) => p.startsWith('build secrets file ')));
    t.false(problems.join('\n').includes(CANARY));
  });
}

test('a good file: values from value and from file, scopes kept; /config shows ids and scopes only', (t) => {
  const valueFile = file('.txt', `${CANARY}-from-file\n`);
  const path = file(
    '.yaml',
    [
      '- id: npmrc',
      `  value: ${CANARY}`,
      '  repositories: [{ host: Git.Example.com, pathPrefix: team/ }]',
      '- id: pip.conf',
      `  file: ${valueFile}`,
      '  repositories: [{ host: other.example }]',
    ].join('\n'),
  );
  const config = loadConfig({ argv: [], env: { ...baseEnv, BUILD_SECRETS_CONFIG_PATH: path } });
  t.deepEqual(config.buildSecrets, [
    { id: 'npmrc', value: CANARY, repositories: [{ host: 'Git.Example.com', pathPrefix: 'team/' }] },
    { id: 'pip.conf', value: `${CANARY}-from-file\n`, repositories: [{ host: 'other.example' }] },
  ]);
  const view = JSON.stringify(effectiveConfigView(config));
  t.false(view.includes(CANARY));
  t.true(view.includes('"buildSecrets":[{"id":"npmrc"'));
});

test('the settings file buildSecrets.entries is read when no build secrets file is given, and checked alike', (t) => {
  const settings = file(
    '.json',
    JSON.stringify({ buildSecrets: { entries: [{ id: 'npmrc', value: CANARY, repositories: SCOPE }] } }),
  );
  const config = loadConfig({ argv: ['--settings', settings], env: baseEnv });
  t.deepEqual(
    config.buildSecrets?.map((s) => s.id),
    ['npmrc'],
  );
  const unscoped = file(
    '.json',
    JSON.stringify({ buildSecrets: { entries: [{ id: 'npmrc', value: CANARY }] } }),
  );
  const err = t.throws(() => loadConfig({ argv: ['--settings', unscoped], env: baseEnv })) as ConfigError;
  t.regex(err.problems.join('\n'), /settings file .*: buildSecrets\.entries: entry "npmrc": no repositories/);
  t.false(err.problems.join('\n').includes(CANARY));
  const wrongType = file('.json', JSON.stringify({ buildSecrets: { entries: CANARY } }));
  const typed = t.throws(() => loadConfig({ argv: ['--settings', wrongType], env: baseEnv })) as ConfigError;
  t.false(typed.problems.join('\n').includes(CANARY));
});
