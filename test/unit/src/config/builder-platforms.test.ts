// The platforms a builder endpoint declares (docs/fleet.md): the flag and env form
// `endpoint=os/arch+os/arch`, the settings file's `{endpoint, platforms}` entries, /config's view,
// and the startup refusals of a malformed declaration.
import test from 'ava';
import { builderEndpoints } from '../../../../src/config/builder-endpoints.js';
import { loadConfig } from '../../../../src/config/load.js';
import { effectiveConfigView } from '../../../../src/config/view.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { baseEnv, file, problemsOf } = configScratch('ibs-builder-platforms-');

const DECLARED = [
  { endpoint: 'tcp://a:1', platforms: ['linux/amd64', 'linux/arm64/v8'] },
  { endpoint: 'tcp://b:2', platforms: [] },
];

test('the flag and env form: endpoint=os/arch+os/arch, an entry without = declares none', (t) => {
  const text = 'tcp://a:1=linux/amd64+linux/arm64/v8, tcp://b:2';
  const flag = loadConfig({ argv: ['--builder-endpoint', text], env: baseEnv });
  t.deepEqual(flag.builders, DECLARED);
  t.deepEqual(builderEndpoints(flag), ['tcp://a:1', 'tcp://b:2']);
  const env = loadConfig({ argv: [], env: { ...baseEnv, BUILDER_ENDPOINT: text } });
  t.deepEqual(env.builders, DECLARED);
});

test('the settings file: a list of strings and {endpoint, platforms} entries, or one text', (t) => {
  const yaml = file(
    '.yaml',
    'builder:\n  endpoint:\n    - endpoint: tcp://a:1\n      platforms: [linux/amd64, linux/arm64/v8]\n    - tcp://b:2\n',
  );
  const config = loadConfig({ argv: ['--settings', yaml], env: baseEnv });
  t.deepEqual(config.builders, DECLARED);
  t.deepEqual(builderEndpoints(config), ['tcp://a:1', 'tcp://b:2']);
  const text = file(
    '.json',
    JSON.stringify({ builder: { endpoint: 'tcp://a:1=linux/amd64+linux/arm64/v8,tcp://b:2' } }),
  );
  t.deepEqual(loadConfig({ argv: ['--settings', text], env: baseEnv }).builders, DECLARED);
});

test('/config shows the platforms of each builder and nativePlatformsOnly', (t) => {
  const config = loadConfig({
    argv: ['--builder-endpoint', 'tcp://a:1=linux/amd64,tcp://b:2', '--native-platforms-only'],
    env: baseEnv,
  });
  const view = effectiveConfigView(config);
  t.deepEqual(view.builders, ['tcp://a:1', 'tcp://b:2']);
  t.deepEqual(view.builderPlatforms, [
    { builder: 'tcp://a:1', platforms: ['linux/amd64'] },
    { builder: 'tcp://b:2', platforms: [] },
  ]);
  t.true(view.nativePlatformsOnly);
});

const REFUSALS: readonly { title: string; argv: string[]; problem: RegExp }[] = [
  {
    title: 'a platform that is no os/arch',
    argv: ['--builder-endpoint', 'tcp://a:1=amd64'],
    problem: /"amd64" is not a platform/,
  },
  {
    title: 'an empty declaration',
    argv: ['--builder-endpoint', 'tcp://a:1='],
    problem: /"" is not a platform/,
  },
  {
    title: 'a platform declared twice',
    argv: ['--builder-endpoint', 'tcp://a:1=linux/386+linux/386'],
    problem: /declares linux\/386 twice/,
  },
  {
    title: 'the same endpoint twice with other platforms',
    argv: ['--builder-endpoint', 'tcp://a:1=linux/386,tcp://a:1=linux/amd64'],
    problem: /"tcp:\/\/a:1" is listed twice/,
  },
  {
    title: 'a settings entry with an unknown key',
    argv: [
      '--settings',
      file('.yaml', 'builder:\n  endpoint:\n    - endpoint: tcp://a:1\n      arch: arm64\n'),
    ],
    problem: /builder\.endpoint\[0\]: must be a string/,
  },
  {
    title: 'a settings entry whose platform is no os/arch',
    argv: [
      '--settings',
      file('.yaml', 'builder:\n  endpoint:\n    - {endpoint: "tcp://a:1", platforms: [arm64]}\n'),
    ],
    problem: /"arm64" is not a platform/,
  },
];

for (const c of REFUSALS) {
  test(`startup refusal: ${c.title}`, (t) => {
    const problems = problemsOf(c.argv);
    t.is(problems.length, 1, problems.join('\n'));
    t.regex(problems[0] ?? '', c.problem);
  });
}
