import test from 'ava';
import { buildReadSet, repositoryPath } from '../../../../workers/builder/read-set.js';

const cases: Array<[string, string | undefined, unknown, Array<[string, 'dir' | 'file']>]> = [
  ['fallback definition reads nothing', undefined, undefined, []],
  [
    'image definition: its folder',
    '.devcontainer/devcontainer.json',
    { image: 'x' },
    [['.devcontainer', 'dir']],
  ],
  [
    'sub-folder definition: only that folder',
    '.devcontainer/py/devcontainer.json',
    { image: 'x', features: { './feat': {} } },
    [['.devcontainer/py', 'dir']],
  ],
  [
    'Dockerfile with a sub-folder context outside the config folder',
    '.devcontainer/devcontainer.json',
    { build: { dockerfile: '../docker/Dockerfile', context: '../docker/ctx' } },
    [
      ['.devcontainer', 'dir'],
      ['docker/Dockerfile', 'file'],
      ['docker/ctx', 'dir'],
    ],
  ],
  [
    'Dockerfile with the root as context: everything',
    '.devcontainer/devcontainer.json',
    { build: { dockerfile: 'Dockerfile', context: '..' } },
    [['', 'dir']],
  ],
  [
    'legacy dockerFile, default context = config folder',
    '.devcontainer/devcontainer.json',
    { dockerFile: 'Dockerfile' },
    [['.devcontainer', 'dir']],
  ],
  [
    'root .devcontainer.json with an image: the file alone',
    '.devcontainer.json',
    { image: 'x' },
    [['.devcontainer.json', 'file']],
  ],
  [
    'root .devcontainer.json with a local feature and a Dockerfile in a folder',
    '.devcontainer.json',
    {
      build: { dockerfile: 'env/Dockerfile', context: 'env' },
      features: { './feats/a': {}, 'ghcr.io/x/y:1': {} },
    },
    [
      ['.devcontainer.json', 'file'],
      ['env', 'dir'],
      ['feats/a', 'dir'],
    ],
  ],
  ['root config that cannot be parsed: everything', '.devcontainer.json', undefined, [['', 'dir']]],
  [
    'folder config that cannot be parsed: its folder',
    '.devcontainer/devcontainer.json',
    undefined,
    [['.devcontainer', 'dir']],
  ],
  [
    'paths leaving the repository are not listed',
    '.devcontainer/devcontainer.json',
    { build: { dockerfile: '../../Dockerfile', context: '../..' } },
    [['.devcontainer', 'dir']],
  ],
];

for (const [name, configPath, definition, expected] of cases) {
  test(`buildReadSet: ${name}`, (t) => {
    t.deepEqual(
      buildReadSet(configPath, definition).map((p) => [p.path, p.kind]),
      expected,
    );
  });
}

test('repositoryPath normalises and refuses escapes', (t) => {
  t.is(repositoryPath('.devcontainer', './a/../b/'), '.devcontainer/b');
  t.is(repositoryPath('.devcontainer', '..'), '');
  t.is(repositoryPath('', '.'), '');
  t.is(repositoryPath('.devcontainer', '../..'), undefined);
  t.is(repositoryPath('', '/etc'), undefined);
});
