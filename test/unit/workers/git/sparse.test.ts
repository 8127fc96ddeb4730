import test from 'ava';
import {
  describeReadSet,
  sparseCheckoutFile,
  sparsePattern,
} from '../../../../workers/git/sparse-patterns.js';
import { objectsStored } from '../../../../workers/git/sparse-checkout.js';
import { parseLsTree } from '../../../../workers/git/tree-listing.js';

for (const [path, kind, expected] of [
  ['', 'dir', '/*'],
  ['.devcontainer', 'dir', '/.devcontainer/'],
  ['.devcontainer.json', 'file', '/.devcontainer.json'],
  ['docker/app', 'dir', '/docker/app/'],
  ['a b/c*d?[e]', 'dir', '/a\\ b/c\\*d\\?\\[e\\]/'],
  ['#x/!y\\z', 'file', '/\\#x/\\!y\\\\z'],
  ['line\nbreak', 'file', '/line?break'],
] as const) {
  test(`sparsePattern(${JSON.stringify(path)}, ${kind})`, (t) => {
    t.is(sparsePattern({ path, kind }), expected);
  });
}

test('sparseCheckoutFile: one anchored line per path; describeReadSet for the log', (t) => {
  const readSet = [
    { path: '.devcontainer', kind: 'dir' as const },
    { path: 'docker/Dockerfile', kind: 'file' as const },
  ];
  t.is(sparseCheckoutFile(readSet), '/.devcontainer/\n/docker/Dockerfile\n');
  t.is(describeReadSet(readSet), '.devcontainer/, docker/Dockerfile');
  t.is(describeReadSet([{ path: '', kind: 'dir' }]), '/');
  t.is(describeReadSet([]), '(none)');
  t.is(sparseCheckoutFile([]), '');
});

test('parseLsTree: -z records with odd paths', (t) => {
  const oid = 'a'.repeat(40);
  t.deepEqual(
    parseLsTree(`100644 blob ${oid}\t.devcontainer/devcontainer.json\u0000120000 blob ${oid}\ta\tb\nc\0`),
    [
      { mode: '100644', type: 'blob', oid, path: '.devcontainer/devcontainer.json' },
      { mode: '120000', type: 'blob', oid, path: 'a\tb\nc' },
    ],
  );
  t.deepEqual(parseLsTree(''), []);
  t.throws(() => parseLsTree('garbage\0'));
});

test('objectsStored: loose plus packed objects of git count-objects -v', (t) => {
  t.is(objectsStored('count: 2\nsize: 8\nin-pack: 246\npacks: 1\nsize-pack: 700\nprune-packable: 0\n'), 248);
  t.is(objectsStored(''), 0);
});
