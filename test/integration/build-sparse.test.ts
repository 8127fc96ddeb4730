/**
 * Partial, sparse clones on the real stack: the large fixture (12 000 files, ~110 MB) builds with
 * only its definition's folder checked out; a Dockerfile with a sub-folder context checks out just
 * that context; a server without filter support gives the same image; a symbolic link in the
 * checked-out paths that leaves them is refused. What the clone directory holds is observed from
 * outside, by sampling the request directories in the scratch space during the build.
 */
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { RunningApp } from '../helpers/app.js';
import { fixtureDefinitions, LARGE_DOCKERFILE_BRANCH } from '../stack/fixtures.js';
import {
  fetchLog,
  filesUnder,
  fixtureCommit,
  httpsCreds,
  httpsRepo,
  postBuild,
  readPushedImage,
  servedRepo,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { imageBytes } from '../helpers/image-bytes.js';

const large = fixtureDefinitions(stack.BASE_IMAGE_ANON).find((f) => f.name === 'large');
if (large === undefined) throw new Error('no large fixture');

/** The files of the large fixture on `branch` under `folders` (from the fixture's data). */
function fixtureFiles(branch: string, folders: string[]): string[] {
  const commits = branch === 'main' ? large!.commits.slice(0, 1) : large!.commits;
  const files = new Set(commits.flatMap((c) => Object.keys(c.files)));
  return [...files].filter((f) => folders.some((d) => f.startsWith(`${d}/`))).sort();
}

interface Sampled {
  /** Every file seen in a clone's working tree (repository-relative, .git left out). */
  files: Set<string>;
  /** The clone's .git/config as last read. */
  lastGitConfig: string;
}

/** Samples the request directories of `app` until the returned stop() is called. */
function sampleClones(app: RunningApp): { stop: () => Sampled } {
  const requests = join(app.ctx.config.scratchDir, 'requests');
  const seen: Sampled = { files: new Set(), lastGitConfig: '' };
  const sample = () => {
    let ids: string[] = [];
    try {
      ids = readdirSync(requests);
    } catch {
      return;
    }
    for (const id of ids) {
      const src = join(requests, id, 'src');
      for (const file of filesUnder(src)) {
        const path = relative(src, file);
        // The Dev Containers CLI itself writes devcontainer-lock.json beside the definition.
        if (!path.startsWith('.git/') && !path.endsWith('/devcontainer-lock.json')) seen.files.add(path);
      }
      try {
        seen.lastGitConfig = readFileSync(join(src, '.git', 'config'), 'utf8');
      } catch {
        // not cloned yet, or gone
      }
    }
  };
  const timer = setInterval(sample, 50);
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}

async function buildSampled(
  app: RunningApp,
  body: Record<string, unknown>,
): Promise<{ res: BuildResponse; seen: Sampled }> {
  const sampler = sampleClones(app);
  const res = await postBuild(app, body);
  return { res, seen: sampler.stop() };
}

async function assertOk(t: ExecutionContext, app: RunningApp, res: BuildResponse): Promise<string> {
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.logId);
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  }
  return (await fetchLog(app, res.body.gitCloneLogId)).text;
}

/** One service per test: the sampler sees only that test's clones. */
async function app(t: ExecutionContext): Promise<RunningApp> {
  const started = await startBuildApp();
  t.teardown(() => started.close());
  return started;
}

test('the large repository builds from its definition folder alone; the image is right', async (t) => {
  const service = await app(t);
  const name = uniqueName('large');
  const { res, seen } = await buildSampled(service, {
    repository: httpsRepo('large'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  });
  const gitLog = await assertOk(t, service, res);
  const commit = fixtureCommit('large', 'main');
  const tag = `sha-${commit.slice(0, 7)}`;
  const { gitCloneLogId, imageBuildLogId, digest, ...rest } = res.body;
  t.deepEqual(rest, {
    image: `${stack.REGISTRY_ANON}/${name}:${tag}`,
    registry: stack.REGISTRY_ANON,
    name,
    tag,
    branch: 'main',
    commit,
  });
  t.regex(String(gitCloneLogId), /^git-/);
  t.regex(String(imageBuildLogId), /^img-/);
  t.regex(String(digest), /^sha256:[0-9a-f]{64}$/);

  t.deepEqual([...seen.files].sort(), fixtureFiles('main', ['.devcontainer']));
  t.true(gitLog.includes('# partial clone (blob:none), sparse paths: .devcontainer/\n'), gitLog);
  t.regex(seen.lastGitConfig, /sparseCheckout = true/i, 'a sparse clone (config keys are case-insensitive)');
  t.false(/promisor|\[remote/.test(seen.lastGitConfig), 'no promisor remote left after the checkout');

  const image = await readPushedImage(stack.REGISTRY_ANON, name, tag);
  t.is(image.labels['org.opencontainers.image.source'], httpsRepo('large'));
  t.is(image.labels['org.opencontainers.image.revision'], commit);
  const metadata = image.labels['devcontainer.metadata'] ?? '';
  t.true(metadata.includes('ibs.fixture-large'), metadata);
  t.true(
    metadata.includes('ibs.large-hello-feature'),
    `the local feature is in the image metadata: ${metadata}`,
  );
});

test('a Dockerfile with a sub-folder context checks out only that context', async (t) => {
  const service = await app(t);
  const name = uniqueName('large-dockerfile');
  const { res, seen } = await buildSampled(service, {
    repository: httpsRepo('large'),
    branch: LARGE_DOCKERFILE_BRANCH,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name, tag: 'ctx' },
  });
  const gitLog = await assertOk(t, service, res);
  t.is(res.body.commit, fixtureCommit('large', LARGE_DOCKERFILE_BRANCH));
  t.deepEqual([...seen.files].sort(), fixtureFiles(LARGE_DOCKERFILE_BRANCH, ['.devcontainer', 'docker/app']));
  t.true(gitLog.includes('sparse paths: .devcontainer/, docker/app/\n'), gitLog);
  const image = await readPushedImage(stack.REGISTRY_ANON, name, 'ctx');
  t.is(image.labels['ibs.fixture'], 'large-dockerfile');
  t.is(image.labels['org.opencontainers.image.revision'], res.body.commit as string);
});

test('a server without filter support: a full clone, the same checkout and the same image', async (t) => {
  const service = await app(t);
  const viaFilter = await buildSampled(service, {
    repository: httpsRepo('large'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('large-filter'), tag: 'x' },
  });
  const viaFull = await buildSampled(service, {
    repository: `${stack.GIT_HTTPS_NO_FILTER_URL}/large.git`,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('large-nofilter'), tag: 'x' },
  });
  const filterLog = await assertOk(t, service, viaFilter.res);
  const fullLog = await assertOk(t, service, viaFull.res);
  t.true(filterLog.includes('# partial clone (blob:none)'), filterLog);
  t.true(fullLog.includes('# server does not support filters: full clone'), fullLog);
  t.deepEqual([...viaFull.seen.files].sort(), [...viaFilter.seen.files].sort());
  t.is(viaFull.res.body.commit, viaFilter.res.body.commit);
  const names = [viaFilter.res.body, viaFull.res.body].map((body) => String(body.name));
  const [a, b] = await Promise.all(names.map((name) => readPushedImage(stack.REGISTRY_ANON, name, 'x')));
  t.is(b?.labels['devcontainer.metadata'], a?.labels['devcontainer.metadata']);
  t.is(b?.labels['org.opencontainers.image.revision'], a?.labels['org.opencontainers.image.revision']);
  // What the images hold, file by file: layer digests would also compare timestamps, which match
  // only when the builder's cache answered the second build.
  const [filesA, filesB] = await Promise.all(names.map((name) => imageFileHashes(name)));
  t.true((filesA?.size ?? 0) > 0);
  t.deepEqual(filesB, filesA);
});

/** Every regular file of the pushed image `<name>:x`, path -> sha256 of its content. */
async function imageFileHashes(name: string): Promise<Map<string, string>> {
  const { files } = await imageBytes(stack.REGISTRY_ANON, name, 'x');
  return new Map(
    [...files].map(([path, content]) => [path, createHash('sha256').update(content).digest('hex')]),
  );
}

const definitionWithFeature = (dir: string) => {
  mkdirSync(join(dir, '.devcontainer'));
  writeFileSync(
    join(dir, '.devcontainer', 'devcontainer.json'),
    JSON.stringify({ image: stack.BASE_IMAGE_ANON, features: { './features/hello': {} } }),
  );
};

for (const [what, message, files] of [
  [
    'a local feature folder linked to a part of the repository the build does not read',
    /is a symbolic link to a part of the repository the build does not read/,
    (dir: string) => {
      definitionWithFeature(dir);
      mkdirSync(join(dir, 'tools', 'hello'), { recursive: true });
      writeFileSync(join(dir, 'tools', 'hello', 'install.sh'), '#!/bin/sh\n');
      mkdirSync(join(dir, '.devcontainer', 'features'));
      symlinkSync('../../tools/hello', join(dir, '.devcontainer', 'features', 'hello'));
    },
  ],
  [
    'an unreferenced link in the definition folder leading out of the clone',
    /^\.devcontainer\/features\/hello\/etc -> "\/etc" resolves outside the repository/,
    (dir: string) => {
      definitionWithFeature(dir);
      mkdirSync(join(dir, '.devcontainer', 'features', 'hello'), { recursive: true });
      writeFileSync(join(dir, '.devcontainer', 'features', 'hello', 'install.sh'), '#!/bin/sh\n');
      symlinkSync('/etc', join(dir, '.devcontainer', 'features', 'hello', 'etc'));
    },
  ],
] as const) {
  test(`${what}: 400, nothing built`, async (t) => {
    const repo = servedRepo(files);
    t.teardown(repo.remove);
    const name = uniqueName('sparse-link');
    const res = await postBuild(await app(t), {
      repository: httpsRepo(repo.name),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.regex(String(res.body.error), message);
    t.is((await fetch(`http://${stack.REGISTRY_ANON}/v2/${name}/tags/list`)).status, 404);
  });
}

test("a later build of the same repository takes the definition's files from the blob cache, with the same checkout", async (t) => {
  const service = await app(t);
  const build = (name: string) =>
    buildSampled(service, {
      repository: httpsRepo('large'),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    });
  const first = await build(uniqueName('seed-a'));
  const firstLog = await assertOk(t, service, first.res);
  t.false(firstLog.includes('blob cache'), firstLog);
  const second = await build(uniqueName('seed-b'));
  const secondLog = await assertOk(t, service, second.res);
  t.true(secondLog.includes("# the definition's files from this instance's blob cache"), secondLog);
  t.deepEqual([...second.seen.files].sort(), fixtureFiles('main', ['.devcontainer']));
  const image = await readPushedImage(
    stack.REGISTRY_ANON,
    second.res.body.name as string,
    second.res.body.tag as string,
  );
  t.true((image.labels['devcontainer.metadata'] ?? '').includes('ibs.large-hello-feature'));
});
