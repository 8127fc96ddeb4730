// Event subscriptions at startup (docs/events.md): a bad URL, an unknown type, a malformed secret,
// a duplicate name refuse the configuration, naming the subscription but never a secret; good ones
// load from the file or the settings file, and /config's view shows host and types only.
import test from 'ava';
import { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';
import { effectiveConfigView } from '../../../../src/config/view.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { baseEnv, file } = configScratch('ibs-events-config-');
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const good = { name: 'deployer', url: 'https://hooks.example:8443/ibs?team=a', secrets: [SECRET] };

function problems(subscriptions: unknown[]): readonly string[] {
  const path = file('.json', JSON.stringify(subscriptions));
  const err = t_throws(() => loadConfig({ argv: ['--event-subscriptions-config-path', path], env: baseEnv }));
  return err.problems;
}

function t_throws(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('the configuration was accepted');
}

const BAD: [string, Record<string, unknown>, RegExp][] = [
  [
    'ftp URL',
    { url: 'ftp://hooks.example/x' },
    /subscription "deployer": url must be an http:\/\/ or https:\/\/ URL/,
  ],
  ['no URL', { url: 'not a url' }, /url must be an http/],
  ['credentials in the URL', { url: 'https://u:p@hooks.example/' }, /url must not hold credentials/],
  [
    'unknown type',
    { types: ['dev.cdevents.build.started'] },
    /types: unknown type "dev.cdevents.build.started"/,
  ],
  ['malformed secret', { secrets: ['whsec_short'] }, /secrets\[0\] is malformed/],
  [
    'secret without prefix',
    { secrets: [Buffer.alloc(32, 1).toString('base64')] },
    /secrets\[0\] is malformed/,
  ],
  ['unknown status', { statuses: ['cancelled'] }, /statuses: unknown status "cancelled"/],
  ['bad name', { name: 'Has Space' }, /subscription 1: name must be/],
  ['unknown key', { secret: SECRET }, /unknown key "secret"/],
];

for (const [what, change, expected] of BAD) {
  test(`startup is refused for a subscription with ${what}, never echoing a secret`, (t) => {
    const found = problems([{ ...good, ...change }]);
    t.true(
      found.some((p) => expected.test(p)),
      found.join('\n'),
    );
    t.false(found.join('\n').includes(SECRET.slice(6, 20)));
    t.false(found.join('\n').includes('whsec_short'));
  });
}

test('a name used twice is refused', (t) => {
  t.true(problems([good, good]).some((p) => p.includes('name is used twice')));
});

test('types match with or without their version; the view shows host and types, never secrets', (t) => {
  const path = file(
    '.yaml',
    JSON.stringify([
      { ...good, types: ['dev.cdevents.build.finished', 'dev.cdevents.artifact.published.0.2.0'] },
    ]),
  );
  const config = loadConfig({ argv: ['--event-subscriptions-config-path', path], env: baseEnv });
  t.is(config.events.subscriptions[0]?.secrets[0], SECRET);
  const view = JSON.stringify(effectiveConfigView(config));
  t.false(view.includes(SECRET));
  t.false(view.includes('team=a'));
  t.deepEqual(effectiveConfigView(config).eventSubscriptions, [
    {
      name: 'deployer',
      host: 'hooks.example:8443',
      types: ['dev.cdevents.build.finished', 'dev.cdevents.artifact.published.0.2.0'],
    },
  ]);
});

test('the settings file holds subscriptions and the retry schedule', (t) => {
  const settings = file(
    '.json',
    JSON.stringify({ events: { subscriptions: [good], retrySeconds: [1, 2, 3] } }),
  );
  const config = loadConfig({ argv: ['--settings', settings], env: baseEnv });
  t.deepEqual(
    config.events.subscriptions.map((s) => s.name),
    ['deployer'],
  );
  t.deepEqual(config.events.retrySeconds, [1, 2, 3]);
  const bad = file('.json', JSON.stringify({ events: { subscriptions: [{ ...good, secrets: ['nope'] }] } }));
  const err = t_throws(() => loadConfig({ argv: ['--settings', bad], env: baseEnv }));
  t.true(
    err.problems.some((p) =>
      p.includes('events.subscriptions: subscription "deployer": secrets[0] is malformed'),
    ),
  );
  t.false(err.problems.join('\n').includes('nope'));
});
