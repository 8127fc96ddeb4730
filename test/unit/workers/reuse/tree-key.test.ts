/**
 * The build key from the commit's trees (tree-key.ts) against the key from a checkout of the same
 * commit (key-inputs.ts over the files and `git ls-tree`), on real local git repositories. Images
 * are pinned by digest, so no registry is asked.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { execa } from 'execa';
import { gitTestEnv } from '../../../helpers/git-test-env.js';
import { fallbackDefinitionText } from '../../../../workers/builder/definition.js';
import { parseJsonc } from '../../../../workers/builder/jsonc.js';
import {
  gitTreeLister,
  locateDefinition,
  type GitCapture,
} from '../../../../workers/git/commit-definition.js';
import { RegistryClient } from '../../../../src/registry/client.js';
import { BlobCache } from '../../../../workers/reuse/blob-cache.js';
import { computeKeyInput, type KeyDeps } from '../../../../workers/reuse/key-inputs.js';
import { readObjectIds } from '../../../../workers/reuse/object-ids.js';
import { keyFromTrees } from '../../../../workers/reuse/tree-key.js';
import { CommitTrees } from '../../../../workers/git/http-trees.js';
import { readPack } from '../../../../workers/git/pack.js';

const BASE = `example.invalid/dev/base@sha256:${'a'.repeat(64)}`;
const FEATURE = `example.invalid/f/tool@sha256:${'b'.repeat(64)}`;
const REPO = 'https://git.example.invalid/team/app.git';
const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;
const env = gitTestEnv;

interface Repo {
  readonly dir: string;
  readonly commit: string;
  readonly git: GitCapture;
  /** The blob id of a path at HEAD. */
  readonly blobOf: (path: string) => Promise<string>;
}

async function repoWith(
  t: ExecutionContext,
  files: Record<string, string>,
  links: Record<string, string> = {},
): Promise<Repo> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-tree-key-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const git: GitCapture = async (args) =>
    (await execa('git', ['-C', dir, ...args], { env, extendEnv: false })).stdout;
  await execa('git', ['init', '-q', '-b', 'main', dir], { env, extendEnv: false });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  for (const [path, target] of Object.entries(links)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await symlink(target, join(dir, path));
  }
  await git(['add', '-A']);
  await git(['commit', '-q', '-m', 'c']);
  const commit = (await git(['rev-parse', 'HEAD'])).trim();
  return { dir, commit, git, blobOf: async (path) => (await git(['rev-parse', `HEAD:${path}`])).trim() };
}

const keyDeps = (): KeyDeps => ({
  access: {
    client: new RegistryClient({ insecureRegistries: [] }),
    insecureRegistries: [],
    registryAuth: undefined,
  },
  secretIds: [],
  platforms: ['linux/amd64'],
  cliVersion: '0.0.0-test',
});

/** The key as a checkout gives it: the config's bytes and the Dockerfile from the files. */
async function checkoutKey(repo: Repo, configPath: string): Promise<string | undefined> {
  const configBytes = await readFile(join(repo.dir, configPath));
  const outcome = await computeKeyInput(
    {
      configPath,
      configBytes,
      definition: parseJsonc(configBytes.toString('utf8')),
      objectIds: (readSet) => readObjectIds(repo.dir, readSet, { baseEnv: env }),
      readText: (path) => readFile(join(repo.dir, path), 'utf8'),
    },
    keyDeps(),
  );
  return outcome.kind === 'keyed' ? outcome.key : undefined;
}

async function treeKey(
  repo: Repo,
  blobs: BlobCache,
  fallbackImage?: string,
  repository = REPO,
): Promise<string | undefined> {
  const listPaths = gitTreeLister(repo.git, repo.commit);
  const located = await locateDefinition(listPaths);
  const keyed = await keyFromTrees({ repository, located, listPaths, fallbackImage, blobs }, keyDeps());
  // The same trees read in process from a tree-only pack (http-trees.ts) give the same key.
  const inMemory = CommitTrees.of(readPack(await treePack(repo)) ?? new Map(), repo.commit);
  if (inMemory === undefined) throw new TypeError('the tree-only pack was not read');
  const fromPack = (paths: readonly string[]) => Promise.resolve(inMemory.list(paths));
  const packKeyed = await keyFromTrees(
    { repository, located: await locateDefinition(fromPack), listPaths: fromPack, fallbackImage, blobs },
    keyDeps(),
  );
  if (packKeyed?.key !== keyed?.key) throw new TypeError(`pack key ${packKeyed?.key} is not ${keyed?.key}`);
  return keyed?.key;
}

/** The commit and its trees, no blob, as a pack (what a tree-only fetch receives). */
async function treePack(repo: Repo): Promise<Buffer> {
  const listed = await execa('git', ['-C', repo.dir, 'rev-list', '--objects', '--filter=blob:none', 'HEAD'], {
    env,
    extendEnv: false,
  });
  const packed = await execa('git', ['-C', repo.dir, 'pack-objects', '--stdout'], {
    env,
    extendEnv: false,
    input: `${listed.stdout}\n`,
    encoding: 'buffer',
    // A pack's checksum may end in a newline byte: keep every byte.
    stripFinalNewline: false,
  });
  return Buffer.from(packed.stdout);
}

/** A cache holding the blobs of `paths`, as a build that read them would leave it. */
async function cacheOf(repo: Repo, paths: string[]): Promise<BlobCache> {
  const blobs = new BlobCache();
  for (const path of paths) blobs.set(REPO, await repo.blobOf(path), await readFile(join(repo.dir, path)));
  return blobs;
}

const featureDefinition = {
  '.devcontainer/devcontainer.json': json({ image: BASE, features: { './tool': {}, [FEATURE]: {} } }),
  '.devcontainer/tool/devcontainer-feature.json': json({ id: 'tool', version: '1.0.0' }),
  '.devcontainer/tool/install.sh': '#!/bin/sh\necho tool\n',
  'src/main.txt': 'code\n',
};

test('image and features: the key from the trees is the key from a checkout; an empty cache gives none', async (t) => {
  const repo = await repoWith(t, featureDefinition);
  const expected = await checkoutKey(repo, '.devcontainer/devcontainer.json');
  t.truthy(expected);
  const blobs = await cacheOf(repo, ['.devcontainer/devcontainer.json']);
  t.is(await treeKey(repo, blobs), expected);
  t.is(await treeKey(repo, new BlobCache()), undefined);
  t.is(await treeKey(repo, blobs, undefined, 'https://git.example.invalid/other.git'), undefined);
});

test('a Dockerfile and context outside the definition folder: the same key, listed from the trees', async (t) => {
  const repo = await repoWith(t, {
    '.devcontainer/devcontainer.json': json({
      build: { dockerfile: '../docker/Dockerfile', context: '../docker/ctx' },
    }),
    'docker/Dockerfile': `FROM ${BASE}\nCOPY a.txt /a.txt\n`,
    'docker/ctx/a.txt': 'a\n',
    'src/main.txt': 'code\n',
  });
  const expected = await checkoutKey(repo, '.devcontainer/devcontainer.json');
  t.truthy(expected);
  const configOnly = await cacheOf(repo, ['.devcontainer/devcontainer.json']);
  t.is(await treeKey(repo, configOnly), undefined, 'the Dockerfile is not cached: check out');
  const blobs = await cacheOf(repo, ['.devcontainer/devcontainer.json', 'docker/Dockerfile']);
  t.is(await treeKey(repo, blobs), expected);
});

test('a root .devcontainer.json naming a local feature: the same key', async (t) => {
  const repo = await repoWith(t, {
    '.devcontainer.json': json({ image: BASE, features: { './tools/x': {} } }),
    'tools/x/devcontainer-feature.json': json({ id: 'x', version: '1.0.0' }),
    'tools/x/install.sh': '#!/bin/sh\n',
  });
  const expected = await checkoutKey(repo, '.devcontainer.json');
  t.truthy(expected);
  t.is(await treeKey(repo, await cacheOf(repo, ['.devcontainer.json'])), expected);
});

test('what only a checkout can check gives no key from the trees: links in the read set, a root context, a path out of the repository', async (t) => {
  const linked = await repoWith(t, featureDefinition, { '.devcontainer/tool/link': '../../src' });
  t.is(await treeKey(linked, await cacheOf(linked, ['.devcontainer/devcontainer.json'])), undefined);

  const viaLink = await repoWith(
    t,
    {
      '.devcontainer/devcontainer.json': json({ build: { dockerfile: 'Dockerfile', context: '../ctx/sub' } }),
      '.devcontainer/Dockerfile': `FROM ${BASE}\n`,
      'real/a.txt': 'a\n',
    },
    { ctx: 'real' },
  );
  const viaLinkBlobs = await cacheOf(viaLink, [
    '.devcontainer/devcontainer.json',
    '.devcontainer/Dockerfile',
  ]);
  t.is(await treeKey(viaLink, viaLinkBlobs), undefined);

  const rootContext = await repoWith(t, {
    '.devcontainer/devcontainer.json': json({ build: { dockerfile: 'Dockerfile', context: '..' } }),
    '.devcontainer/Dockerfile': `FROM ${BASE}\n`,
  });
  const rootBlobs = await cacheOf(rootContext, [
    '.devcontainer/devcontainer.json',
    '.devcontainer/Dockerfile',
  ]);
  t.is(await treeKey(rootContext, rootBlobs), undefined);

  const outside = await repoWith(t, {
    '.devcontainer/devcontainer.json': json({ image: BASE, features: { '../../x': {} } }),
  });
  t.is(await treeKey(outside, await cacheOf(outside, ['.devcontainer/devcontainer.json'])), undefined);
});

test('no definition: the fallback image is keyed from its generated bytes, as a checkout keys it', async (t) => {
  const repo = await repoWith(t, { 'src/main.txt': 'code\n' });
  const text = fallbackDefinitionText(BASE);
  const outcome = await computeKeyInput(
    {
      configPath: undefined,
      configBytes: Buffer.from(text),
      definition: parseJsonc(text),
      objectIds: () => Promise.resolve([]),
      readText: () => Promise.resolve(undefined),
    },
    keyDeps(),
  );
  t.is(outcome.kind, 'keyed');
  t.is(await treeKey(repo, new BlobCache(), BASE), outcome.kind === 'keyed' ? outcome.key : '');
  t.is(await treeKey(repo, new BlobCache()), undefined, 'no fallback image: the checkout says NO_DEFINITION');
});
