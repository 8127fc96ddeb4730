/**
 * The embedded served store keeps its list of repositories in the scratch space: a new store on the
 * same folder (a restarted instance) lists the repositories marked before, once each, and skips a
 * line a crash cut short; the served times themselves are the process's own.
 */
import test from 'ava';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryServedStore,
  REPOSITORIES_FILE,
  type Repository,
  repositoriesOfFile,
  repositoryEntry,
  repositoryOfEntry,
} from '../../../../src/retention/served.js';
import { ImageTarget } from '../../../../src/rules/image-target.js';

/** A repository named at its host (no namespace path). */
const repo = (text: string): ImageTarget => repositoryOfEntry(text);
const names = (repositories: readonly Repository[]): string[] => repositories.map((r) => r.repository);

async function scratch(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'served-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const DIGEST = `sha256:${'a'.repeat(64)}`;

test('a new store on the same scratch space lists the repositories marked before', async (t) => {
  const dir = await scratch(t);
  const first = new MemoryServedStore({ scratchDir: dir });
  await first.mark(repo('registry.example:5000/team/app'), [DIGEST, 'tag:v1']);
  await first.mark(repo('registry.example:5000/team/tool'), [DIGEST]);
  await first.mark(repo('registry.example:5000/team/app'), ['tag:v2']);
  t.deepEqual(names(await first.repositories()), [
    'registry.example:5000/team/app',
    'registry.example:5000/team/tool',
  ]);
  t.is((await stat(join(dir, REPOSITORIES_FILE))).mode & 0o777, 0o600);

  const restarted = new MemoryServedStore({ scratchDir: dir });
  t.deepEqual(names(await restarted.repositories()), [
    'registry.example:5000/team/app',
    'registry.example:5000/team/tool',
  ]);
  // The times are forgotten: an image then counts as served at its build time.
  t.deepEqual([...(await restarted.servedTimes('registry.example:5000/team/app')).keys()], []);
  await restarted.mark(repo('registry.example:5000/team/app'), [DIGEST]);
  t.deepEqual([...(await restarted.servedTimes('registry.example:5000/team/app')).keys()], [DIGEST]);
  const lines = (await readFile(join(dir, REPOSITORIES_FILE), 'utf8')).trim().split('\n');
  t.is(lines.length, 2, 'a known repository is not written again');
});

test('two stores marking at once: each repository is listed once', async (t) => {
  const dir = await scratch(t);
  const [a, b] = [new MemoryServedStore({ scratchDir: dir }), new MemoryServedStore({ scratchDir: dir })];
  await Promise.all([
    a.mark(repo('r.example/x'), [DIGEST]),
    b.mark(repo('r.example/x'), [DIGEST]),
    a.mark(repo('r.example/y'), []),
  ]);
  t.deepEqual(names(await new MemoryServedStore({ scratchDir: dir }).repositories()).sort(), [
    'r.example/x',
    'r.example/y',
  ]);
});

test('a line cut short by a crash, or not a repository, is skipped', async (t) => {
  const dir = await scratch(t);
  await appendFile(
    join(dir, REPOSITORIES_FILE),
    '"r.example/a"\n{"not":"a name"}\n""\n"r.example/b"\n"r.exam',
  );
  t.deepEqual(names(await new MemoryServedStore({ scratchDir: dir }).repositories()), [
    'r.example/a',
    'r.example/b',
  ]);
  t.deepEqual(repositoriesOfFile(''), []);
  t.deepEqual(repositoriesOfFile('"x/y"\n"x/y"\n'), ['x/y']);
});

test("without a scratch space the list is the process's own; an unreadable file fails, not empties, the list", async (t) => {
  const memory = new MemoryServedStore();
  await memory.mark(repo('r.example/a'), [DIGEST]);
  t.deepEqual(names(await memory.repositories()), ['r.example/a']);
  const dir = await scratch(t);
  // A folder where the file should be: reading it fails with EISDIR.
  const blocked = join(dir, 'blocked');
  await mkdir(join(blocked, REPOSITORIES_FILE), { recursive: true });
  await t.throwsAsync(new MemoryServedStore({ scratchDir: blocked }).repositories());
});

test('a registry with a namespace path is listed with it and read back as named', async (t) => {
  const dir = await scratch(t);
  const namespaced = new ImageTarget('localhost:5000/org', 'app');
  t.is(repositoryEntry(namespaced), '["localhost:5000/org","app"]');
  t.is(repositoryEntry(new ImageTarget('localhost:5000', 'org/app')), 'localhost:5000/org/app');
  await new MemoryServedStore({ scratchDir: dir }).mark(namespaced, [DIGEST]);
  const [listed] = await new MemoryServedStore({ scratchDir: dir }).repositories();
  t.deepEqual(
    { registry: listed?.registry, name: listed?.name },
    { registry: 'localhost:5000/org', name: 'app' },
  );
  t.is(listed?.repository, 'localhost:5000/org/app');
  // A setting's text, an entry of an earlier version, and a bracketed IPv6 host read at the first `/`.
  for (const [text, registry, name] of [
    ['localhost:5000/org/app', 'localhost:5000', 'org/app'],
    ['[::1]:5000/app', '[::1]:5000', 'app'],
    ['["broken', '["broken', ''],
  ] as const) {
    const read = repositoryOfEntry(text);
    t.deepEqual([read.registry, read.name], [registry, name], text);
  }
});
