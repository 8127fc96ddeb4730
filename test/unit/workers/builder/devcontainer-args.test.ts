import test from 'ava';
import {
  devcontainerBuildArgs,
  devcontainerCliBundle,
  devcontainerCliScript,
  type DevcontainerBuildInput,
} from '../../../../workers/builder/devcontainer-build.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const base: DevcontainerBuildInput = {
  workspaceFolder: '/s/src',
  imageRef: 'r:5000/team/app:sha-1234567',
  platforms: [],
  noCache: false,
  mode: 'auto',
  omitSyntaxDirective: true,
  labels: [],
};

const cases: [string, Partial<DevcontainerBuildInput>, string[]][] = [
  [
    'minimal',
    {},
    [
      'build',
      '--workspace-folder',
      '/s/src',
      '--image-name',
      'r:5000/team/app:sha-1234567',
      '--push',
      '--omit-syntax-directive',
      '--buildkit',
      'auto',
    ],
  ],
  [
    'everything',
    {
      configFile: '/s/src/.devcontainer/python/devcontainer.json',
      platforms: ['linux/amd64', 'linux/386'],
      noCache: true,
      cacheFrom: 'type=registry,ref=r/c:1',
      cacheTo: 'type=registry,ref=r/c:1,mode=max',
      mode: 'never',
      labels: [
        ['org.opencontainers.image.source', 'https://h/x.git'],
        ['org.opencontainers.image.revision', 'abc'],
      ],
    },
    [
      'build',
      '--workspace-folder',
      '/s/src',
      '--config',
      '/s/src/.devcontainer/python/devcontainer.json',
      '--image-name',
      'r:5000/team/app:sha-1234567',
      '--push',
      '--omit-syntax-directive',
      '--platform',
      'linux/amd64,linux/386',
      '--no-cache',
      '--cache-from',
      'type=registry,ref=r/c:1',
      '--cache-to',
      'type=registry,ref=r/c:1,mode=max',
      '--buildkit',
      'never',
      '--label',
      'org.opencontainers.image.source=https://h/x.git',
      '--label',
      'org.opencontainers.image.revision=abc',
    ],
  ],
  [
    'syntax directive kept when the setting is off',
    { omitSyntaxDirective: false },
    [
      'build',
      '--workspace-folder',
      '/s/src',
      '--image-name',
      'r:5000/team/app:sha-1234567',
      '--push',
      '--buildkit',
      'auto',
    ],
  ],
  [
    'with the docker wrapper: first platform only for the CLI',
    { dockerPath: '/s/gen/docker-wrapper', platforms: ['linux/amd64', 'linux/386'] },
    [
      'build',
      '--docker-path',
      '/s/gen/docker-wrapper',
      '--workspace-folder',
      '/s/src',
      '--image-name',
      'r:5000/team/app:sha-1234567',
      '--push',
      '--omit-syntax-directive',
      '--platform',
      'linux/amd64',
      '--buildkit',
      'auto',
    ],
  ],
  [
    'single platform',
    { platforms: ['linux/arm64/v8'] },
    [
      'build',
      '--workspace-folder',
      '/s/src',
      '--image-name',
      'r:5000/team/app:sha-1234567',
      '--push',
      '--omit-syntax-directive',
      '--platform',
      'linux/arm64/v8',
      '--buildkit',
      'auto',
    ],
  ],
];

for (const [name, input, expected] of cases) {
  test(`devcontainerBuildArgs: ${name}`, (t) => {
    t.deepEqual(devcontainerBuildArgs({ ...base, ...input }), expected);
  });
}

test("the service runs the bundle the package's own entry script requires", async (t) => {
  const bundle = devcontainerCliBundle();
  t.true(existsSync(bundle));
  const entry = await readFile(devcontainerCliScript(), 'utf8');
  const required = /require\('([^']+)'\)/.exec(entry)?.[1];
  t.truthy(required, entry);
  t.is(`${join(dirname(devcontainerCliScript()), required ?? '')}.js`, bundle);
});

test('the CLI script is the installed package, not something on PATH', (t) => {
  const script = devcontainerCliScript();
  t.regex(script, /node_modules\/@devcontainers\/cli\/devcontainer\.js$/);
  t.true(existsSync(script));
});
