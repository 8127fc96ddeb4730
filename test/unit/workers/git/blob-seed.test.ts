/**
 * The definition's files from the blob cache instead of a fetch (blob-seed.ts), on a real partial
 * clone of a local repository: once seeded, the checkout needs no server at all (the clone has no
 * remote left); bytes that are not the named blob are refused; links are never cached.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../../helpers/git-test-env.js';
import {
  gitTreeLister,
  locateDefinition,
  type GitCapture,
} from '../../../../workers/git/commit-definition.js';
import { placeBlobs, rememberBlobs, seedBlobs } from '../../../../workers/git/blob-seed.js';
import { BlobCache } from '../../../../workers/reuse/blob-cache.js';

const REPO = 'file-repo';
const env = gitTestEnv;
const gitIn =
  (dir: string): GitCapture =>
  async (args) =>
    (await execa('git', ['-C', dir, ...args], { env, extendEnv: false })).stdout;

const FILES = {
  '.devcontainer/devcontainer.json': '{ "image": "x", "features": { "./tool": {} } }\n',
  '.devcontainer/tool/devcontainer-feature.json': '{ "id": "tool" }\n',
  '.devcontainer/tool/install.sh': 'echo hi\n',
  'src/app.txt': 'application code\n',
};

/** A partial clone (trees only) of a new repository holding FILES, sparse on `.devcontainer/`. */
async function partialClone(t: ExecutionContext) {
  const root = await mkdtemp(join(tmpdir(), 'ibs-blob-seed-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const source = join(root, 'source');
  await execa('git', ['init', '-q', '-b', 'main', source], { env, extendEnv: false });
  for (const [path, content] of Object.entries(FILES)) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const src = gitIn(source);
  await src(['add', '-A']);
  await src(['commit', '-q', '-m', 'one']);
  await src(['config', 'uploadpack.allowFilter', 'true']);
  const clone = join(root, 'clone');
  await execa(
    'git',
    ['clone', '-q', '--filter=blob:none', '--no-checkout', '--depth', '1', `file://${source}`, clone],
    { env, extendEnv: false },
  );
  const git = gitIn(clone);
  await git(['config', 'core.sparseCheckout', 'true']);
  await git(['config', 'core.sparseCheckoutCone', 'false']);
  await writeFile(join(clone, '.git', 'info', 'sparse-checkout'), '/.devcontainer/\n');
  const located = await locateDefinition(gitTreeLister(git, 'HEAD'));
  if (located === undefined) throw new Error('no definition located');
  const entries = placeBlobs(located.listing, located.ownPlace);
  if (entries === undefined) throw new Error('the place has links');
  const scratch = join(root, 'scratch');
  await mkdir(scratch);
  return { root, clone, git, entries, scratch };
}

test('seeded from the cache, the checkout of the definition needs no server', async (t) => {
  const cache = new BlobCache();
  // A first build: fetched by the checkout, then remembered.
  const first = await partialClone(t);
  t.is(first.entries.length, 3);
  await first.git(['checkout', '-q']);
  await rememberBlobs(cache, REPO, first.entries, first.clone);
  // A later build: seeded, then checked out with no remote to fetch from.
  const later = await partialClone(t);
  t.true(await seedBlobs(later.git, cache, REPO, later.entries, later.scratch));
  await later.git(['remote', 'remove', 'origin']);
  await later.git(['checkout', '-q']);
  const listed = (await later.git(['ls-files', '-t'])).split('\n').filter((l) => l.startsWith('H '));
  t.is(listed.length, 3);
});

test('bytes that are not the named blob, or another repository, seed nothing', async (t) => {
  const clone = await partialClone(t);
  const wrong = new BlobCache();
  for (const entry of clone.entries) wrong.set(REPO, entry.oid, Buffer.from('not this content\n'));
  t.false(await seedBlobs(clone.git, wrong, REPO, clone.entries, clone.scratch));
  const other = new BlobCache();
  for (const entry of clone.entries) other.set('another-repo', entry.oid, Buffer.from('x'));
  t.false(await seedBlobs(clone.git, other, REPO, clone.entries, clone.scratch));
});

test('a place holding a link is never cached', (t) => {
  const listing = new Map([
    ['.devcontainer', { mode: '040000', type: 'tree', oid: 'a'.repeat(40), path: '.devcontainer' }],
    [
      '.devcontainer/devcontainer.json',
      { mode: '100644', type: 'blob', oid: 'b'.repeat(40), path: '.devcontainer/devcontainer.json' },
    ],
    ['.devcontainer/l', { mode: '120000', type: 'blob', oid: 'c'.repeat(40), path: '.devcontainer/l' }],
  ]);
  t.is(placeBlobs(listing, [{ path: '.devcontainer', kind: 'dir' }]), undefined);
  t.is(placeBlobs(new Map([...listing].slice(0, 2)), [{ path: '.devcontainer', kind: 'dir' }])?.length, 1);
});
