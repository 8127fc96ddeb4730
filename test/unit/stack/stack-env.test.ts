// Pure parts of the local stack: env parsing/formatting, registry challenges, fixture definitions.
import test from 'ava';
import { formatEnv } from '../../stack/endpoints.js';
import { OPTIONS } from '../../../src/config/options.js';
import {
  EARLIER_KEY_NAMES,
  STACK_ENV_KEYS,
  StackNotRunningError,
  envJsonRecord,
  parseStackEnv,
  stackEnv,
} from '../../stack/env.js';
import { FIXTURE_NAMES, branchDefinition, fixtureDefinitions } from '../../stack/fixtures.js';
import { parseChallenge } from '../../stack/registry-client.js';

const complete = Object.fromEntries(STACK_ENV_KEYS.map((k) => [k, `v-${k}`]));

test('parseStackEnv accepts a complete record and rejects missing keys by name', (t) => {
  t.is(parseStackEnv(complete, 'x').REGISTRY_ANON, 'v-REGISTRY_ANON');
  const { STACK_BUILDER_ENDPOINT: _b, ...partial } = complete;
  const err = t.throws(() => parseStackEnv(partial, 'env.json'), { instanceOf: StackNotRunningError });
  t.regex(err!.message, /STACK_BUILDER_ENDPOINT/);
  t.regex(err!.message, /npm run stack -- up/);
});

test('stackEnv tells to start the stack when its dir has no env.json', (t) => {
  const err = t.throws(() => stackEnv('/nonexistent/ibs-stack'), { instanceOf: StackNotRunningError });
  t.regex(err!.message, /npm run stack -- up/);
});

const quoting: Array<[string, string]> = [
  ['localhost:5000', 'localhost:5000'],
  ['ssh://root@127.0.0.1:22/tmp/x', 'ssh://root@127.0.0.1:22/tmp/x'],
  ['[127.0.0.1]:22 ssh-ed25519 AAAA', `'[127.0.0.1]:22 ssh-ed25519 AAAA'`],
  [`it's`, `'it'\\''s'`],
];
for (const [value, expected] of quoting) {
  test(`formatEnv writes ${JSON.stringify(value)} shell-safe`, (t) => {
    const line = formatEnv(parseStackEnv({ ...complete, GIT_SSH_HOST_KEY: value }, 'x'))
      .split('\n')
      .find((l) => l.startsWith('GIT_SSH_HOST_KEY='));
    t.is(line, `GIT_SSH_HOST_KEY=${expected}`);
  });
}

const challenges: Array<[string, string, Record<string, string>]> = [
  ['Basic realm="basic-realm"', 'basic', { realm: 'basic-realm' }],
  [
    'Bearer realm="http://localhost:1/token",service="reg",scope="repository:dev/base:pull"',
    'bearer',
    { realm: 'http://localhost:1/token', service: 'reg', scope: 'repository:dev/base:pull' },
  ],
  ['', '', {}],
];
for (const [header, scheme, params] of challenges) {
  test(`parseChallenge(${JSON.stringify(header)})`, (t) => {
    t.deepEqual(parseChallenge(header), { scheme, params });
  });
}

test('fixture definitions cover every fixture name and reference the base image', (t) => {
  const defs = fixtureDefinitions('localhost:1/dev/base:1');
  t.deepEqual(
    defs.map((d) => d.name),
    [...FIXTURE_NAMES],
  );
  t.deepEqual(defs.find((d) => d.name === 'empty')?.commits, []);
  for (const d of defs.filter((x) => x.name !== 'noconfig' && x.name !== 'empty'))
    t.true(JSON.stringify(d.commits).includes('localhost:1/dev/base:1'), d.name);
});

test('the branches fixture differs between main, dev and v1.0.0', (t) => {
  const refs = ['main', 'dev', 'v1.0.0'] as const;
  const defs = refs.map((r) => JSON.stringify(branchDefinition('b', r)));
  t.is(new Set(defs).size, 3);
});

test('no variable the stack writes is the env var of a service option', (t) => {
  const optionVars = new Set(OPTIONS.map((o) => o.env));
  const written = formatEnv(parseStackEnv(complete, 'x'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.slice(0, line.indexOf('=')));
  t.deepEqual(written, [...STACK_ENV_KEYS]);
  t.deepEqual(
    written.filter((name) => optionVars.has(name)),
    [],
  );
});

test('env.json carries the earlier names of renamed keys, and a stack written with them still parses', (t) => {
  const json = envJsonRecord(parseStackEnv(complete, 'x'));
  const older: Record<string, string> = { ...complete };
  for (const [key, earlier] of Object.entries(EARLIER_KEY_NAMES)) {
    t.is(json[earlier], `v-${key}`, earlier);
    older[earlier] = older[key] ?? '';
    delete older[key];
  }
  t.deepEqual(Object.keys(EARLIER_KEY_NAMES).sort(), [
    'STACK_BUILDER_ENDPOINT',
    'STACK_BUILDER_TLS_SERVER_NAME',
    'STACK_REDIS_URL',
  ]);
  t.deepEqual(parseStackEnv(older, 'x'), parseStackEnv(complete, 'x'));
});
