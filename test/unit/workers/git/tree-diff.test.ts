/**
 * The files that differ between two commits' trees (tree-diff.ts), on real local git
 * repositories read as the service reads a tree-only pack: added, changed and removed files
 * named, an unchanged folder never read (the trees read are counted), a folder replaced by a
 * file, the first 50 named and the rest counted, and a tree that cannot be read.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { execa } from 'execa';
import { gitTestEnv as env } from '../../../helpers/git-test-env.js';
import { readPack } from '../../../../workers/git/pack.js';
import { diffTrees, type Side } from '../../../../workers/git/tree-diff.js';
import { treeEntries } from '../../../../workers/git/tree-object.js';

interface History {
  /** The trees of both commits, by id, and each id asked for. */
  readonly read: (oid: string) => ReturnType<typeof treeEntries> | undefined;
  readonly asked: string[];
  /** The tree (or blob) id of `path` in the first or second commit. */
  readonly idOf: (commit: 'before' | 'after', path: string) => Promise<string>;
}

/** A repository with two commits: `first`, then `then` applied (null deletes a file). */
async function history(
  t: ExecutionContext,
  first: Record<string, string>,
  then: Record<string, string | null>,
): Promise<History> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-tree-diff-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const git = async (...args: string[]) =>
    (await execa('git', ['-C', dir, ...args], { env, extendEnv: false })).stdout;
  await execa('git', ['init', '-q', '-b', 'main', dir], { env, extendEnv: false });
  const apply = async (files: Record<string, string | null>): Promise<void> => {
    for (const [path, content] of Object.entries(files)) {
      if (content === null) await rm(join(dir, path), { recursive: true });
      else {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content);
      }
    }
    await git('add', '-A');
    await git('commit', '-q', '--allow-empty', '-m', 'c');
  };
  await apply(first);
  const before = (await git('rev-parse', 'HEAD')).trim();
  await apply(then);
  const listed = await git('rev-list', '--objects', '--filter=blob:none', 'HEAD');
  const packed = await execa('git', ['-C', dir, 'pack-objects', '--stdout'], {
    env,
    extendEnv: false,
    input: `${listed}\n`,
    encoding: 'buffer',
    stripFinalNewline: false,
  });
  const objects = readPack(Buffer.from(packed.stdout)) ?? new Map();
  const asked: string[] = [];
  return {
    asked,
    read: (oid) => {
      asked.push(oid);
      const object = objects.get(oid);
      return object?.type === 'tree' ? treeEntries(object.data) : undefined;
    },
    idOf: async (commit, path) =>
      (await git('rev-parse', `${commit === 'before' ? before : 'HEAD'}:${path}`)).trim(),
  };
}

const tree = (oid: string): Side => ({ oid, type: 'tree' });

/** 300 files in 30 folders that never change. */
const LIBRARY = Object.fromEntries(
  Array.from({ length: 300 }, (_, i) => [`lib/d${i % 30}/f${i}.txt`, `${i}\n`]),
);

test('a changed, a removed and an added file are named; the unchanged folder is never read', async (t) => {
  const h = await history(
    t,
    { 'app.txt': 'one\n', 'old.txt': 'old\n', 'src/main.txt': 'main\n', ...LIBRARY },
    { 'app.txt': 'two\n', 'old.txt': null, 'src/new/a.txt': 'a\n' },
  );
  const diff = diffTrees(h.read, '', tree(await h.idOf('before', '')), tree(await h.idOf('after', '')));
  t.deepEqual(diff, {
    files: [
      { path: 'app.txt', change: 'changed' },
      { path: 'old.txt', change: 'removed' },
      { path: 'src/new/a.txt', change: 'added' },
    ],
    more: 0,
  });
  // Both roots, both src trees, and the new folder: nothing of lib/.
  t.is(h.asked.length, 5, h.asked.join(' '));
  t.false(h.asked.includes(await h.idOf('after', 'lib')));
});

test('a path of the read set names its files from the repository root; a folder replaced by a file', async (t) => {
  const h = await history(
    t,
    { '.devcontainer/x/a': 'a\n', '.devcontainer/x/b': 'b\n', '.devcontainer/Dockerfile': 'FROM a\n' },
    // The folder goes first (its key's trailing slash), then a file of the same name.
    { '.devcontainer/x/': null, '.devcontainer/x': 'now a file\n' },
  );
  const diff = diffTrees(
    h.read,
    '.devcontainer',
    tree(await h.idOf('before', '.devcontainer')),
    tree(await h.idOf('after', '.devcontainer')),
  );
  t.deepEqual(diff?.files, [
    { path: '.devcontainer/x/a', change: 'removed' },
    { path: '.devcontainer/x/b', change: 'removed' },
    { path: '.devcontainer/x', change: 'added' },
  ]);
});

test('the first 50 files are named, the rest counted; a path that appears adds all its files', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 62 }, (_, i) => [`ctx/f${1000 + i}.txt`, `${i}\n`]));
  const h = await history(t, { 'README.md': '#\n' }, many);
  const diff = diffTrees(h.read, 'ctx', undefined, tree(await h.idOf('after', 'ctx')));
  t.is(diff?.files.length, 50);
  t.is(diff?.more, 12);
  t.deepEqual(diff?.files[0], { path: 'ctx/f1000.txt', change: 'added' });
  t.true(diff?.files.every((file) => file.change === 'added'));
});

test('a file path compares its blob ids; a tree that cannot be read gives no answer', (t) => {
  const read = () => undefined;
  t.deepEqual(
    diffTrees(
      read,
      '.devcontainer.json',
      { oid: '1'.repeat(40), type: 'blob' },
      { oid: '2'.repeat(40), type: 'blob' },
    ),
    { files: [{ path: '.devcontainer.json', change: 'changed' }], more: 0 },
  );
  t.is(diffTrees(read, '', tree('1'.repeat(40)), tree('2'.repeat(40))), undefined);
  t.deepEqual(diffTrees(read, 'x', tree('1'.repeat(40)), tree('1'.repeat(40))), { files: [], more: 0 });
});
