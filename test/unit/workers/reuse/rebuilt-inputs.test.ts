/**
 * Why a build ran, input by input (rebuilt-inputs.ts, input-changes.ts): each input with its old
 * and new value, a path with the files under it that differ when they can be read, and the line
 * the log and the record say it with (a path's line names its old and new tree, then its files).
 */
import test from 'ava';
import type { BuildKeyInput } from '../../../../workers/reuse/build-key.js';
import type { PathChange } from '../../../../workers/git/tree-changes.js';
import { inputChanges } from '../../../../workers/reuse/input-changes.js';
import { describeRebuilt, withFiles } from '../../../../workers/reuse/rebuilt-inputs.js';

const base: BuildKeyInput = {
  configDigest: `sha256:${'c'.repeat(64)}`,
  paths: [
    { path: '', kind: 'dir', objectId: '1'.repeat(40) },
    { path: '.devcontainer.json', kind: 'file', objectId: '3'.repeat(40) },
  ],
  baseImages: [{ ref: 'localhost:5000/dev/base:1', digest: `sha256:${'b'.repeat(64)}` }],
  features: [],
  platforms: [],
  cliVersion: '0.89.0',
  buildProcessVersion: 1,
};

test('a path is named with the files under it; a base image with both digests; other inputs as values', async (t) => {
  const after: BuildKeyInput = {
    ...base,
    paths: [
      { path: '', kind: 'dir', objectId: '2'.repeat(40) },
      { path: '.devcontainer.json', kind: 'file', objectId: '3'.repeat(40) },
    ],
    baseImages: [{ ref: 'localhost:5000/dev/base:1', digest: `sha256:${'e'.repeat(64)}` }],
  };
  const asked: PathChange[][] = [];
  const changed = await withFiles(inputChanges(base, after), (paths) => {
    asked.push([...paths]);
    return Promise.resolve([
      {
        files: [
          { path: 'app.txt', change: 'changed' },
          { path: 'old.txt', change: 'removed' },
        ],
        more: 3,
      },
    ]);
  });
  t.deepEqual(asked, [[{ path: '', kind: 'dir', before: '1'.repeat(40), after: '2'.repeat(40) }]]);
  t.deepEqual(changed.map(describeRebuilt), [
    'path / (the repository root): 111111111111 -> 222222222222: app.txt changed, old.txt removed, 3 more files',
    `base image localhost:5000/dev/base:1: sha256:${'b'.repeat(64)} -> sha256:${'e'.repeat(64)}`,
  ]);
  t.deepEqual(changed[1], {
    input: 'base image localhost:5000/dev/base:1',
    before: `sha256:${'b'.repeat(64)}`,
    after: `sha256:${'e'.repeat(64)}`,
  });
});

test('files that cannot be read leave the path line as it is; without a reader nothing is asked', async (t) => {
  const after: BuildKeyInput = { ...base, paths: [{ path: '', kind: 'dir', objectId: '2'.repeat(40) }] };
  const unknown = await withFiles(inputChanges(base, after), (paths) =>
    Promise.resolve(paths.map(() => undefined)),
  );
  t.deepEqual(unknown.map(describeRebuilt), [
    'path / (the repository root): 111111111111 -> 222222222222',
    'path .devcontainer.json: 333333333333 -> absent',
  ]);
  const none = await withFiles(inputChanges(base, { ...base, cliVersion: '0.90.0' }), undefined);
  t.deepEqual(none, [{ input: 'Dev Containers CLI', before: '0.89.0', after: '0.90.0' }]);
});
