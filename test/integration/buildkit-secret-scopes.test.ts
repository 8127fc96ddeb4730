/**
 * The builder's cache keeps secret scopes (docs/secrets.md), on the real stack: a layer built with a
 * secret is answered only to builds offered the same secret (cached steps, identical steps running
 * together, another builder through a registry cache), a new request value runs the step (reuse on
 * too), builds offered the same entry share the cache, and no value nor its plain hash is readable.
 */
import test, { type ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { SECRETS_FIXTURE_DOCKERFILE, SECRETS_FIXTURE_ID } from '../stack/fixtures.js';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  httpsRepo,
  ownDockerfileRepo,
  postBuild,
  stack,
  startBuildAppFor,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { imageBytes, imageLeaks, sha256Hex } from '../helpers/image-bytes.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { startRedis } from '../helpers/redis-process.js';
import { SECRETS_IDENTITY_KEY } from '../../src/redis/keys.js';

const IDENTITY_ARG = 'IBS_BUILD_SECRETS_IDENTITY';
const HTTPS_HOST = new URL(stack.GIT_HTTPS_URL).hostname;
const canary = (): string => `CANARY-${randomBytes(12).toString('hex')}`;
const npmrc = (token: string): string => `//npm.example.com/:_authToken=${token}\n`;
const nonce = (): string => randomBytes(8).toString('hex');

/** A repository of its own holding `dockerfile` (several may hold the same one). */
function repoOf(t: ExecutionContext, dockerfile: string): { name: string; repository: string } {
  const repo = ownDockerfileRepo(dockerfile);
  t.teardown(repo.remove);
  return repo;
}

const scopeOf = (repo: { name: string }) => ({ host: HTTPS_HOST, pathPrefix: `${repo.name}.git` });

const body = (repository: string, label: string, buildSecrets?: Record<string, string>) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name: uniqueName(label) },
  ...(buildSecrets === undefined ? {} : { buildSecrets }),
});

/** The hash the build's image recorded (at its tag, or at `ref`). */
async function recordedHash(res: BuildResponse, ref = String(res.body.tag)): Promise<string> {
  const image = await imageBytes(stack.REGISTRY_ANON, String(res.body.name), ref);
  const file = image.files.get('npmrc.sha256');
  if (file === undefined) throw new Error(`no /npmrc.sha256 in ${String(res.body.name)}`);
  return file.toString().split(/\s+/)[0] ?? '';
}

/** The img log's time stamp of a line of output, when it has one. */
const STAMP = '(?:\\[[^\\]]*\\] )?';

/**
 * Whether BuildKit answered the secret-mounting RUN step from a cache (its plain progress in the img
 * log): `#N CACHED`; or, for a registry cache's entry whose layer the build had to fetch, only that
 * layer's download under the step (`#N sha256:<digest> <size> / <size> done`, maybe its extraction)
 * before `#N DONE`: BuildKit shows one or the other for the same hit, as the fetch happens before
 * the step's progress ends or after. A step that ran fetches nothing.
 */
function secretStepCached(log: string): boolean {
  const step = new RegExp(`^${STAMP}#(\\d+) \\[[^\\]]*\\] RUN --mount=type=secret`, 'm').exec(log)?.[1];
  if (step === undefined) throw new Error(`no secret-mounting step in:\n${log}`);
  const lines = log
    .split(/\r?\n/)
    .map((line) => line.replace(new RegExp(`^${STAMP}`), ''))
    .filter((line) => line.startsWith(`#${step} `))
    .slice(1);
  if (lines.includes(`#${step} CACHED`)) return true;
  const fetched = new RegExp(
    `^#${step} (?:extracting )?sha256:[0-9a-f]{64}(?: \\S+ / \\S+)? (?:[0-9.]+s )?done$`,
  );
  const done = new RegExp(`^#${step} DONE [0-9.]+s$`);
  return (
    lines.some((line) => fetched.test(line)) && lines.every((line) => fetched.test(line) || done.test(line))
  );
}

/** The digest BuildKit pushed for this build (its img log's `pushing manifest for <ref>@<digest>`). */
async function pushedDigest(running: RunningApp, res: BuildResponse): Promise<string> {
  const digest = /pushing manifest for \S+@(sha256:[0-9a-f]{64})/.exec(await imgLog(running, res))?.[1];
  if (digest === undefined) throw new Error('no pushed manifest in the img log');
  return digest;
}

async function imgLog(running: RunningApp, res: BuildResponse): Promise<string> {
  return (await fetchLog(running, res.body.imageBuildLogId ?? res.body.logId)).text;
}

function built(t: ExecutionContext, res: BuildResponse, what: string): void {
  t.is(res.status, 200, `${what}: ${JSON.stringify(res.body)}`);
}

/** A 500 whose img log's last lines name the secret the step needed. */
async function failedForMissingSecret(
  t: ExecutionContext,
  running: RunningApp,
  res: BuildResponse,
  what: string,
) {
  t.is(res.status, 500, `${what}: ${JSON.stringify(res.body)}`);
  const tail = (await imgLog(running, res)).trimEnd().split('\n').slice(-20).join('\n');
  t.regex(tail, new RegExp(`secret ${SECRETS_FIXTURE_ID}: not found`), `${what}:\n${tail}`);
}

test('a server entry scoped to repositories holds through the cache; the same entry shares it', async (t) => {
  const dockerfile = SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce());
  const [sec, sibling, other] = [repoOf(t, dockerfile), repoOf(t, dockerfile), repoOf(t, dockerfile)];
  const value = npmrc(canary());
  const running = await startBuildAppFor(t, {
    buildSecrets: [{ id: SECRETS_FIXTURE_ID, value, repositories: [scopeOf(sec), scopeOf(sibling)] }],
  });
  // Started together: BuildKit would merge identical steps running at once.
  const [first, outside] = await Promise.all([
    postBuild(running, body(sec.repository, 'scope-sec')),
    postBuild(running, body(other.repository, 'scope-other')),
  ]);
  built(t, first, 'the repository in scope');
  t.is(await recordedHash(first), sha256Hex(value));
  await failedForMissingSecret(t, running, outside, 'outside the scope, started together');
  const after = await postBuild(running, body(other.repository, 'scope-other-after'));
  await failedForMissingSecret(t, running, after, 'outside the scope, after the first built');

  const again = await postBuild(running, body(sec.repository, 'scope-sec-again'));
  built(t, again, 'the repository in scope, again');
  t.true(secretStepCached(await imgLog(running, again)), 'its own step is CACHED');
  const shared = await postBuild(running, body(sibling.repository, 'scope-sibling'));
  built(t, shared, 'another repository in the scope');
  t.true(secretStepCached(await imgLog(running, shared)), 'the same entry finds the step CACHED');
  t.is(await recordedHash(shared), sha256Hex(value));
});

test('across builders, through a registry cache: outside the scope fails, the same entry is CACHED', async (t) => {
  const dockerfile = SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce());
  const [sec, sibling, other] = [repoOf(t, dockerfile), repoOf(t, dockerfile), repoOf(t, dockerfile)];
  const value = npmrc(canary());
  const buildSecrets = [{ id: SECRETS_FIXTURE_ID, value, repositories: [scopeOf(sec), scopeOf(sibling)] }];
  // Two replicas (one identity key, in Redis) on two builders, each with its own BuildKit cache:
  // only the registry cache links them.
  const redis = await startRedis();
  t.teardown(() => redis.dispose());
  const replica = (builder: string) =>
    startBuildAppFor(t, { builderEndpoints: [builder], buildSecrets, redis: { url: redis.url } });
  const [onA, onB] = [await replica(stack.BUILDER_A_ENDPOINT), await replica(stack.BUILDER_B_ENDPOINT)];
  const cacheRef = `${stack.REGISTRY_ANON}/${uniqueName('secret-cache')}:buildcache`;
  const exported = await postBuild(onA, {
    ...body(sec.repository, 'fleet-sec'),
    buildOptions: { cacheTo: `type=registry,ref=${cacheRef},mode=max` },
  });
  built(t, exported, 'the repository in scope on builder a');
  t.false(secretStepCached(await imgLog(onA, exported)), 'the step ran on builder a');
  const cacheFrom = { buildOptions: { cacheFrom: `type=registry,ref=${cacheRef}` } };
  const outside = await postBuild(onB, { ...body(other.repository, 'fleet-other'), ...cacheFrom });
  await failedForMissingSecret(t, onB, outside, 'outside the scope on builder b');
  const shared = await postBuild(onB, { ...body(sibling.repository, 'fleet-sibling'), ...cacheFrom });
  built(t, shared, 'the same entry on builder b');
  const log = await imgLog(onB, shared);
  t.regex(log, /importing cache manifest from/);
  t.true(secretStepCached(log), 'the step comes from the registry cache');
  t.is(await recordedHash(shared), sha256Hex(value));
});

test('with reuse on, a new request value builds with it; two values at once each record their own', async (t) => {
  const repo = repoOf(t, SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce()));
  const running = await startBuildAppFor(t, { build: { reuse: true } });
  const [old, rotated, a, b] = [npmrc(canary()), npmrc(canary()), npmrc(canary()), npmrc(canary())];
  const name = uniqueName('value');
  const named = (buildSecrets: Record<string, string>) => ({
    ...body(repo.repository, 'value', buildSecrets),
    image: { registry: stack.REGISTRY_ANON, name },
  });
  const first = await postBuild(running, named({ npmrc: old }));
  built(t, first, 'the old value');
  t.is(await recordedHash(first), sha256Hex(old));
  const second = await postBuild(running, named({ npmrc: rotated }));
  built(t, second, 'the new value');
  const log = await imgLog(running, second);
  t.regex(log, /build secrets: other values/, 'the reuse names why it builds');
  t.false(secretStepCached(log), 'the step ran');
  t.is(await recordedHash(second), sha256Hex(rotated));
  const same = await postBuild(running, named({ npmrc: rotated }));
  built(t, same, 'the new value again');
  t.regex(await imgLog(running, same), /reused, no build/);

  // Same repository, image and ids: only the values tell them apart (no follow, no merged step).
  const [withA, withB] = await Promise.all([
    postBuild(running, named({ npmrc: a })),
    postBuild(running, named({ npmrc: b })),
  ]);
  built(t, withA, 'value a');
  built(t, withB, 'value b');
  // Both pushed the same tag: each image is read by the digest its own build log says it pushed.
  t.is(await recordedHash(withA, await pushedDigest(running, withA)), sha256Hex(a));
  t.is(await recordedHash(withB, await pushedDigest(running, withB)), sha256Hex(b));
});

test('image-based definitions offered a secret build, feature steps keyed; without secrets nothing is', async (t) => {
  const running = await startBuildAppFor(t);
  const history = async (res: BuildResponse): Promise<string> =>
    (await imageBytes(stack.REGISTRY_ANON, String(res.body.name), String(res.body.tag))).documents.join('\n');
  const image = await postBuild(running, body(httpsRepo('image'), 'plain-image', { npmrc: canary() }));
  built(t, image, 'image');
  t.regex(await imgLog(running, image), /# build secrets offered: npmrc/);
  const feature = await postBuild(running, body(httpsRepo('feature'), 'plain-feature', { npmrc: canary() }));
  built(t, feature, 'image and a feature');
  // The CLI's own Dockerfile (features) is keyed too: its RUN steps record the identity.
  t.regex(await history(feature), new RegExp(`${IDENTITY_ARG}=[0-9a-f]{64}`));
  const without = await postBuild(running, body(httpsRepo('feature'), 'plain-feature-none'));
  built(t, without, 'no secret');
  t.false((await history(without)).includes(IDENTITY_ARG), 'a build offered no secret is not keyed');
});

/** The step checks the secret is there and writes nothing of it: any trace would be a leak. */
const SILENT_DOCKERFILE = (base: string, n: string): string =>
  [
    `FROM ${base}`,
    `ENV IBS_FIXTURE_NONCE=${n}`,
    `RUN --mount=type=secret,id=${SECRETS_FIXTURE_ID},required=true --mount=type=secret,id=pip,required=true test -s /run/secrets/${SECRETS_FIXTURE_ID}`,
    '',
  ].join('\n');

/** The canary and the plain (unkeyed) sha256 digests someone could compute from it. */
function traces(value: string, id: string): string[] {
  const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
  return [value, sha(value), sha(`${id}${value}`), sha(JSON.stringify([[id, value]]))];
}

test('no value nor its plain hash is in the image, its history, its max provenance, the logs or Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.dispose());
  const repo = repoOf(t, SILENT_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce()));
  const [serverValue, requestValue] = [canary(), canary()];
  const running = await startBuildAppFor(t, {
    redis: { url: redis.url },
    build: { provenance: 'max' },
    buildSecrets: [{ id: 'pip', value: serverValue, repositories: [scopeOf(repo)] }],
  });
  const res = await postBuild(
    running,
    body(repo.repository, 'no-leak', { [SECRETS_FIXTURE_ID]: requestValue }),
  );
  built(t, res, 'the build');
  const image = await imageBytes(stack.REGISTRY_ANON, String(res.body.name), String(res.body.tag));
  const everything = image.documents.join('\n');
  t.true(everything.includes('https://slsa.dev/provenance') || image.layers.some((l) => l.includes('slsa')));
  const identity = new RegExp(`${IDENTITY_ARG}=([0-9a-f]{64})`).exec(everything)?.[1];
  t.truthy(identity, 'the keyed identity is in the history');
  const logs = [await imgLog(running, res), (await fetchLog(running, res.body.gitCloneLogId)).text];
  const dump = await dumpRedis(redis.url);
  t.true(dump.includes(SECRETS_IDENTITY_KEY), 'the identity key is kept in Redis');
  const both = createHash('sha256')
    .update(
      JSON.stringify([
        [SECRETS_FIXTURE_ID, requestValue],
        ['pip', serverValue],
      ]),
    )
    .digest('hex');
  for (const trace of [both, ...traces(serverValue, 'pip'), ...traces(requestValue, SECRETS_FIXTURE_ID)]) {
    t.not(identity, trace);
    t.deepEqual(imageLeaks(image, trace), [], 'image: layers, configs, history, provenance');
    t.false(
      logs.some((log) => log.includes(trace)),
      'the logs',
    );
    t.false(running.logText().includes(trace), 'the service log');
    t.false(dump.includes(trace), 'Redis');
  }
});
