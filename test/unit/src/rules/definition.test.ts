import test from 'ava';
import { findDefinitionIn, type ListingKind } from '../../../../src/rules/definition.js';

const listing = (entries: Record<string, ListingKind>) => new Map(Object.entries(entries));

const cases: Array<[string, Record<string, ListingKind>, ReturnType<typeof findDefinitionIn>]> = [
  ['nothing', { 'README.md': 'file' }, undefined],
  [
    '.devcontainer/devcontainer.json first',
    {
      '.devcontainer.json': 'file',
      '.devcontainer/devcontainer.json': 'file',
      '.devcontainer/a/devcontainer.json': 'file',
    },
    { path: '.devcontainer/devcontainer.json' },
  ],
  [
    '.devcontainer.json next',
    { '.devcontainer.json': 'file', '.devcontainer/a/devcontainer.json': 'file' },
    { path: '.devcontainer.json' },
  ],
  [
    'the lexically first sub-folder (by folder name, not by path)',
    {
      '.devcontainer/a-b/devcontainer.json': 'file',
      '.devcontainer/a/devcontainer.json': 'file',
      '.devcontainer/Z/devcontainer.json': 'file',
      '.devcontainer/0/other.json': 'file',
    },
    { path: '.devcontainer/Z/devcontainer.json' },
  ],
  ['deeper folders do not count', { '.devcontainer/a/b/devcontainer.json': 'file' }, undefined],
  [
    'a linked .devcontainer folder hides the first candidate',
    { '.devcontainer': 'link', '.devcontainer.json': 'file' },
    { linkedFolder: '.devcontainer' },
  ],
  [
    'a linked sub-folder before the first real one',
    { '.devcontainer/a': 'link', '.devcontainer/b/devcontainer.json': 'file' },
    { linkedFolder: '.devcontainer/a' },
  ],
  [
    'a linked sub-folder after the one found does not matter',
    { '.devcontainer/z': 'link', '.devcontainer/b/devcontainer.json': 'file' },
    { path: '.devcontainer/b/devcontainer.json' },
  ],
  [
    'a linked definition file is found (its target is checked by the caller)',
    { '.devcontainer/devcontainer.json': 'link' },
    { path: '.devcontainer/devcontainer.json' },
  ],
];

for (const [name, entries, expected] of cases) {
  test(`findDefinitionIn: ${name}`, (t) => {
    t.deepEqual(findDefinitionIn(listing(entries)), expected);
  });
}
