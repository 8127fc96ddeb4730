import test, { type ExecutionContext } from 'ava';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isServiceError } from '../../../../src/errors/errors.js';
import { resolveDefinition } from '../../../../workers/builder/definition.js';
import { referencedPaths } from '../../../../workers/builder/read-set.js';

type Tree = Record<string, string | { link: string }>;

async function clone(t: ExecutionContext, tree: Tree) {
  const root = await mkdtemp(join(tmpdir(), 'definition-test-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const src = join(root, 'src');
  const generated = join(root, 'generated');
  await mkdir(src);
  await mkdir(generated);
  for (const [path, content] of Object.entries(tree)) {
    const file = join(src, path);
    await mkdir(dirname(file), { recursive: true });
    if (typeof content === 'string') await writeFile(file, content);
    else await symlink(content.link.replace('$ROOT', root), file);
  }
  return { root, src, generated };
}

const def = (value: unknown) => JSON.stringify(value);

const lookups: [string, Tree, string][] = [
  [
    '.devcontainer/devcontainer.json first',
    {
      '.devcontainer/devcontainer.json': '{}',
      '.devcontainer.json': '{}',
      '.devcontainer/a/devcontainer.json': '{}',
    },
    '.devcontainer/devcontainer.json',
  ],
  [
    '.devcontainer.json next',
    { '.devcontainer.json': '{}', '.devcontainer/a/devcontainer.json': '{}' },
    '.devcontainer.json',
  ],
  [
    'the lexically first sub-folder last',
    {
      '.devcontainer/python/devcontainer.json': '{}',
      '.devcontainer/go/devcontainer.json': '{}',
      '.devcontainer/Zeta/devcontainer.json': '{}',
      '.devcontainer/empty/README': '',
    },
    '.devcontainer/Zeta/devcontainer.json',
  ],
  [
    'a Dockerfile, context and local feature inside the clone are fine',
    {
      '.devcontainer/devcontainer.json': def({
        build: { dockerfile: 'Dockerfile', context: '..' },
        features: { './features/x': {}, 'ghcr.io/devcontainers/features/node:1': {} },
      }),
      '.devcontainer/Dockerfile': 'FROM x',
      '.devcontainer/features/x/install.sh': '',
    },
    '.devcontainer/devcontainer.json',
  ],
  ['an unparseable definition is left to the CLI', { '.devcontainer.json': '{ nope' }, '.devcontainer.json'],
];

for (const [name, tree, expected] of lookups) {
  test(`resolveDefinition: ${name}`, async (t) => {
    const { src, generated } = await clone(t, tree);
    const found = await resolveDefinition({ cloneDir: src, generatedDir: generated });
    t.is(found.repositoryPath, expected);
    t.is(found.configFile, join(src, expected));
  });
}

test('resolveDefinition: none with a fallback image -> a generated definition outside the clone', async (t) => {
  const { src, generated } = await clone(t, { 'README.md': '' });
  const found = await resolveDefinition({
    cloneDir: src,
    generatedDir: generated,
    fallbackImage: 'r:1/dev/base:1',
  });
  t.is(found.repositoryPath, undefined);
  t.true(found.configFile.startsWith(generated));
  t.deepEqual(JSON.parse(await readFile(found.configFile, 'utf8')), { image: 'r:1/dev/base:1' });
});

test('resolveDefinition: none and no fallback -> 400 NO_DEFINITION', async (t) => {
  const { src, generated } = await clone(t, { 'README.md': '' });
  const err = await t.throwsAsync(resolveDefinition({ cloneDir: src, generatedDir: generated }));
  t.true(isServiceError(err) && err.code === 'NO_DEFINITION' && err.status === 400);
});

const escapes: [string, Tree][] = [
  ['definition symlinked outside', { '.devcontainer.json': { link: '/etc/hostname' } }],
  [
    '.devcontainer folder symlinked outside',
    { '../outside/devcontainer.json': '{}', '.devcontainer': { link: '$ROOT/outside' } },
  ],
  [
    'sub-folder symlinked outside',
    { '../outside/devcontainer.json': '{}', '.devcontainer/a': { link: '$ROOT/outside' } },
  ],
  [
    'Dockerfile through ..',
    { '.devcontainer/devcontainer.json': def({ build: { dockerfile: '../../x/Dockerfile' } }) },
  ],
  ['legacy dockerFile through ..', { '.devcontainer.json': def({ dockerFile: '../Dockerfile' }) }],
  [
    'context through ..',
    { '.devcontainer/devcontainer.json': def({ build: { dockerfile: 'D', context: '../..' } }) },
  ],
  [
    'context symlinked outside',
    {
      '.devcontainer/devcontainer.json': def({ build: { dockerfile: 'D', context: 'ctx' } }),
      '.devcontainer/D': 'FROM x',
      '.devcontainer/ctx': { link: '/etc' },
    },
  ],
  [
    'Dockerfile symlinked outside',
    {
      '.devcontainer/devcontainer.json': def({ build: { dockerfile: 'D' } }),
      '.devcontainer/D': { link: '/etc/hostname' },
    },
  ],
  ['compose file through ..', { '.devcontainer.json': def({ dockerComposeFile: ['ok.yml', '../c.yml'] }) }],
  ['local feature through ..', { '.devcontainer/devcontainer.json': def({ features: { '../../f': {} } }) }],
  ['absolute Dockerfile', { '.devcontainer.json': def({ build: { dockerfile: '/etc/hostname' } }) }],
];

for (const [name, tree] of escapes) {
  test(`resolveDefinition refuses: ${name}`, async (t) => {
    const { src, generated } = await clone(t, tree);
    const err = await t.throwsAsync(
      resolveDefinition({ cloneDir: src, generatedDir: generated, fallbackImage: 'x' }),
    );
    t.true(isServiceError(err) && err.code === 'DEFINITION_OUTSIDE_CLONE' && err.status === 400, String(err));
    t.false(String(err?.message).includes(src), 'no server path in the message');
  });
}

for (const [name, tree, expected] of [
  ['image', { '.devcontainer.json': def({ image: 'x' }) }, false],
  ['build.dockerfile', { '.devcontainer.json': def({ build: { dockerfile: 'D' } }) }, true],
  ['legacy dockerFile', { '.devcontainer.json': def({ dockerFile: 'D' }) }, true],
  ['unparseable (unknown)', { '.devcontainer.json': '{ nope' }, true],
  ['fallback', {}, false],
] as const) {
  test(`resolveDefinition: dockerfileBased for ${name}`, async (t) => {
    const { src, generated } = await clone(t, tree as Tree);
    const found = await resolveDefinition({ cloneDir: src, generatedDir: generated, fallbackImage: 'x' });
    t.is(found.dockerfileBased, expected);
  });
}

test('referencedPaths lists what a definition points at', (t) => {
  t.deepEqual(
    referencedPaths({
      build: { dockerfile: 'D', context: '..' },
      dockerFile: 'L',
      context: 'c',
      dockerComposeFile: ['a.yml', 'b.yml'],
      features: { './f': {}, '../g': {}, 'ghcr.io/x/y:1': {} },
    }),
    ['D', '..', 'L', 'c', 'a.yml', 'b.yml', './f', '../g'],
  );
  t.deepEqual(referencedPaths(null), []);
  t.deepEqual(referencedPaths({ image: 'x' }), []);
});

const outsideReadSet: [string, Tree][] = [
  [
    'a local feature folder linked to a path not checked out',
    {
      '.devcontainer/devcontainer.json': def({ features: { './features/x': {} } }),
      '.devcontainer/features/x': { link: '../../tools/x' },
    },
  ],
  [
    'a Dockerfile linked to a file of the repository outside the read set',
    {
      '.devcontainer/devcontainer.json': def({ build: { dockerfile: 'D' } }),
      '.devcontainer/D': { link: '../docker/Dockerfile' },
      'docker/Dockerfile': 'FROM x',
    },
  ],
  [
    'an unreferenced link in the definition folder to elsewhere in the repository',
    {
      '.devcontainer/devcontainer.json': def({ image: 'x' }),
      '.devcontainer/notes': { link: '../README.md' },
    },
  ],
];

for (const [name, tree] of outsideReadSet) {
  test(`resolveDefinition refuses (read set): ${name}`, async (t) => {
    const { src, generated } = await clone(t, tree);
    const err = await t.throwsAsync(resolveDefinition({ cloneDir: src, generatedDir: generated }));
    t.true(
      isServiceError(err) && err.code === 'DEFINITION_OUTSIDE_READ_SET' && err.status === 400,
      String(err),
    );
    t.false(String(err?.message).includes(src), 'no server path in the message');
  });
}

test('resolveDefinition refuses an unreferenced link in the read set that leaves the clone', async (t) => {
  const { src, generated } = await clone(t, {
    '.devcontainer/devcontainer.json': def({ image: 'x' }),
    '.devcontainer/sub/etc': { link: '/etc' },
  });
  const err = await t.throwsAsync(resolveDefinition({ cloneDir: src, generatedDir: generated }));
  t.true(isServiceError(err) && err.code === 'DEFINITION_OUTSIDE_CLONE', String(err));
});

test('resolveDefinition: links inside the read set are fine; links outside it are not looked at', async (t) => {
  const { src, generated } = await clone(t, {
    '.devcontainer/devcontainer.json': def({ build: { dockerfile: 'D', context: '../ctx' } }),
    '.devcontainer/D': { link: 'real.dockerfile' },
    '.devcontainer/real.dockerfile': 'FROM x',
    'ctx/a': { link: 'b' },
    'elsewhere/etc': { link: '/etc' },
  });
  const found = await resolveDefinition({ cloneDir: src, generatedDir: generated });
  t.is(found.repositoryPath, '.devcontainer/devcontainer.json');
  t.true(found.dockerfileBased);
});

test('resolveDefinition: the path found in the commit is used as given', async (t) => {
  const { src, generated } = await clone(t, {
    '.devcontainer/devcontainer.json': '{}',
    '.devcontainer/b/devcontainer.json': '{}',
  });
  const found = await resolveDefinition({
    cloneDir: src,
    generatedDir: generated,
    configPath: '.devcontainer/b/devcontainer.json',
  });
  t.is(found.repositoryPath, '.devcontainer/b/devcontainer.json');
});
