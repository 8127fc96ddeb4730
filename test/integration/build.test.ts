/**
 * POST /build against the real stack: every successful kind of build, the result's every
 * field, and the pushed image read back over the registry API (tag, platforms, labels).
 */
import test, { type ExecutionContext } from 'ava';
import type { RunningApp } from '../helpers/app.js';
import type { RegistryCreds } from '../stack/registry-client.js';
import {
  fetchLog,
  fixtureCommit,
  httpsCreds,
  httpsRepo,
  postBuild,
  readPushedImage,
  stack,
  startBuildApp,
  uniqueName,
  type BuildOverrides,
  type BuildResponse,
  type PushedImage,
} from '../helpers/build-support.js';

interface Expected {
  repository: string;
  registry: string;
  name: string;
  branch: string;
  commit: string;
  /** Default: sha-<7 of commit>. */
  tag?: string;
  /** A string the devcontainer.metadata label must contain. */
  marker?: string;
  /** false: a definition with nothing to record (the CLI then writes no devcontainer.metadata label). */
  metadata?: false;
  creds?: RegistryCreds;
}

/** Asserts a 200 with exactly the fields of docs/openapi.yaml, fetchable logs, and the image in its registry. */
async function assertBuilt(
  t: ExecutionContext,
  app: RunningApp,
  res: BuildResponse,
  expected: Expected,
): Promise<PushedImage> {
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.logId);
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  }
  const tag = expected.tag ?? `sha-${expected.commit.slice(0, 7)}`;
  const { gitCloneLogId, imageBuildLogId, digest, ...rest } = res.body;
  t.deepEqual(rest, {
    image: `${expected.registry}/${expected.name}:${tag}`,
    registry: expected.registry,
    name: expected.name,
    tag,
    branch: expected.branch,
    commit: expected.commit,
  });
  t.regex(String(gitCloneLogId), /^git-[0-9a-f]{8}-/);
  t.regex(String(imageBuildLogId), /^img-[0-9a-f]{8}-/);
  const gitLog = await fetchLog(app, gitCloneLogId);
  t.is(gitLog.status, 200);
  t.true(
    gitLog.text.includes(
      'git clone --config core.sparseCheckout=true --config core.sparseCheckoutCone=false --filter=blob:none --no-checkout --depth 1 --single-branch --no-tags',
    ),
  );
  const imgLog = await fetchLog(app, imageBuildLogId);
  t.is(imgLog.status, 200);
  t.true(imgLog.text.includes('devcontainer build'));

  const image = await readPushedImage(expected.registry, expected.name, tag, expected.creds);
  t.regex(String(digest), /^sha256:[0-9a-f]{64}$/);
  t.is(digest, image.digest, 'the answer names the digest the registry serves for the tag');
  t.is(image.labels['org.opencontainers.image.source'], expected.repository);
  t.is(image.labels['org.opencontainers.image.revision'], expected.commit);
  const metadata = image.labels['devcontainer.metadata'];
  if (expected.metadata !== false) {
    t.truthy(metadata, 'devcontainer.metadata label');
    t.true(Array.isArray(JSON.parse(metadata ?? 'null')));
  }
  if (expected.marker !== undefined) t.true(metadata?.includes(expected.marker), metadata);
  return image;
}

const apps: RunningApp[] = [];
async function app(overrides: BuildOverrides = {}): Promise<RunningApp> {
  const started = await startBuildApp(overrides);
  apps.push(started);
  return started;
}
test.after.always(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

let plain: Promise<RunningApp>;
test.before(() => {
  plain = app({ build: { fallbackImage: stack.BASE_IMAGE_ANON } });
});

test('https with request credentials: derived name and sha tag', async (t) => {
  const service = await plain;
  const repository = httpsRepo('feature');
  const res = await postBuild(service, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON },
  });
  await assertBuilt(t, service, res, {
    repository,
    registry: stack.REGISTRY_ANON,
    name: 'feature',
    branch: 'main',
    commit: fixtureCommit('feature', 'main'),
    marker: 'ibs.hello-feature',
  });
});

test('https with a server credential entry', async (t) => {
  const service = await app({
    gitCredentials: [
      { host: '127.0.0.1', kind: 'https', username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    ],
  });
  const repository = httpsRepo('image');
  const name = uniqueName('server-entry');
  const res = await postBuild(service, {
    repository,
    image: { registry: stack.REGISTRY_ANON, name, tag: 'v1' },
  });
  await assertBuilt(t, service, res, {
    repository,
    registry: stack.REGISTRY_ANON,
    name,
    tag: 'v1',
    branch: 'main',
    commit: fixtureCommit('image', 'main'),
    marker: 'ibs.fixture-image',
  });
});

for (const [ref, marker] of [
  ['dev', 'ibs.fixture-branches-dev'],
  ['v1.0.0', 'ibs.fixture-branches-v1-0-0'],
] as const) {
  test(`an explicit ${ref === 'dev' ? 'branch' : 'tag'} (${ref})`, async (t) => {
    const service = await plain;
    const repository = httpsRepo('branches');
    const name = uniqueName('branches');
    const res = await postBuild(service, {
      repository,
      branch: ref,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    });
    await assertBuilt(t, service, res, {
      repository,
      registry: stack.REGISTRY_ANON,
      name,
      branch: ref,
      commit: fixtureCommit('branches', ref),
      marker,
    });
  });
}

for (const [fixture, marker, what] of [
  ['dockerfile', 'ibs.fixture-dockerfile', 'a Dockerfile-based definition'],
  ['rootfile', 'ibs.fixture-rootfile', 'only .devcontainer.json'],
  ['subfolder', 'ibs.fixture-subfolder', 'a sub-folder definition'],
] as const) {
  test(`${what} (${fixture})`, async (t) => {
    const service = await plain;
    const repository = httpsRepo(fixture);
    const name = uniqueName(fixture);
    const res = await postBuild(service, {
      repository,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    });
    const image = await assertBuilt(t, service, res, {
      repository,
      registry: stack.REGISTRY_ANON,
      name,
      branch: 'main',
      commit: fixtureCommit(fixture, 'main'),
      marker,
    });
    if (fixture === 'dockerfile') t.is(image.labels['org.opencontainers.image.title'], 'fixture-dockerfile');
  });
}

test('no definition: built from the fallback image', async (t) => {
  const service = await plain;
  const repository = httpsRepo('noconfig');
  const name = uniqueName('fallback');
  const res = await postBuild(service, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  });
  await assertBuilt(t, service, res, {
    repository,
    registry: stack.REGISTRY_ANON,
    name,
    branch: 'main',
    commit: fixtureCommit('noconfig', 'main'),
    metadata: false,
  });
  const log = (await fetchLog(service, res.body.imageBuildLogId)).text;
  t.true(log.includes(`"image": "${stack.BASE_IMAGE_ANON}"`) || log.includes(stack.BASE_IMAGE_ANON));
});

test('no definition and no fallback image: 400, nothing built', async (t) => {
  const service = await app();
  const name = uniqueName('nofallback');
  const res = await postBuild(service, {
    repository: httpsRepo('noconfig'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
  });
  t.is(res.status, 400);
  t.regex(String(res.body.error), /no dev container definition/);
  const manifest = await fetch(`http://${stack.REGISTRY_ANON}/v2/${name}/tags/list`);
  t.is(manifest.status, 404);
});

test('explicit platforms linux/amd64 and linux/386', async (t) => {
  const service = await plain;
  const repository = httpsRepo('feature');
  const name = uniqueName('platforms');
  const res = await postBuild(service, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name },
    platforms: ['linux/amd64', 'linux/386'],
  });
  const image = await assertBuilt(t, service, res, {
    repository,
    registry: stack.REGISTRY_ANON,
    name,
    branch: 'main',
    commit: fixtureCommit('feature', 'main'),
  });
  t.deepEqual(image.platforms.sort(), ['linux/386', 'linux/amd64']);
});

test('cacheTo then cacheFrom of type registry: the second build imports and reuses the cache', async (t) => {
  const service = await plain;
  const repository = httpsRepo('feature');
  const cacheRef = `${stack.REGISTRY_ANON}/${uniqueName('cache')}:buildcache`;
  const first = await postBuild(service, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('cached'), tag: 'one' },
    buildOptions: { cacheTo: `type=registry,ref=${cacheRef},mode=max` },
  });
  t.is(first.status, 200, JSON.stringify(first.body));
  const [cacheName, cacheTag] = cacheRef.slice(stack.REGISTRY_ANON.length + 1).split(':');
  const cacheManifest = await fetch(`http://${stack.REGISTRY_ANON}/v2/${cacheName}/manifests/${cacheTag}`, {
    headers: {
      accept: 'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json',
    },
  });
  t.is(cacheManifest.status, 200, 'the cache was exported to the registry');

  const name = uniqueName('cached');
  const second = await postBuild(service, {
    repository,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name, tag: 'two' },
    buildOptions: { cacheFrom: `type=registry,ref=${cacheRef}` },
  });
  await assertBuilt(t, service, second, {
    repository,
    registry: stack.REGISTRY_ANON,
    name,
    tag: 'two',
    branch: 'main',
    commit: fixtureCommit('feature', 'main'),
  });
  const log = (await fetchLog(service, second.body.imageBuildLogId)).text;
  t.true(
    log.includes(`--cache-from type=registry,ref=${cacheRef}`),
    'the cache source is passed to the build',
  );
  t.regex(log, /importing cache manifest from/);
  t.regex(log, /CACHED/);
});

const basicCreds = (): RegistryCreds => ({
  user: stack.REGISTRY_BASIC_USER,
  password: stack.REGISTRY_BASIC_PASSWORD,
});
const tokenCreds = (): RegistryCreds => ({
  user: stack.REGISTRY_TOKEN_USER,
  password: stack.REGISTRY_TOKEN_PASSWORD,
});

for (const [kind, registry, creds] of [
  ['Basic', () => stack.REGISTRY_BASIC, basicCreds],
  ['Bearer', () => stack.REGISTRY_TOKEN, tokenCreds],
] as const) {
  test(`${kind} registry with request credentials`, async (t) => {
    const service = await plain;
    const repository = httpsRepo('image');
    const name = uniqueName(`${kind.toLowerCase()}-request`);
    const c = creds();
    const res = await postBuild(service, {
      repository,
      gitCredentials: httpsCreds(),
      image: { registry: registry(), name },
      registryCredentials: { registry: registry(), username: c.user, password: c.password },
    });
    await assertBuilt(t, service, res, {
      repository,
      registry: registry(),
      name,
      branch: 'main',
      commit: fixtureCommit('image', 'main'),
      creds: c,
    });
  });

  test(`${kind} registry with ambient auth`, async (t) => {
    const c = creds();
    const service = await app({
      registryAuth: {
        auths: { [registry()]: { auth: Buffer.from(`${c.user}:${c.password}`).toString('base64') } },
      },
    });
    const repository = httpsRepo('image');
    const name = uniqueName(`${kind.toLowerCase()}-ambient`);
    const res = await postBuild(service, {
      repository,
      gitCredentials: httpsCreds(),
      image: { registry: registry(), name },
    });
    await assertBuilt(t, service, res, {
      repository,
      registry: registry(),
      name,
      branch: 'main',
      commit: fixtureCommit('image', 'main'),
      creds: c,
    });
  });
}
