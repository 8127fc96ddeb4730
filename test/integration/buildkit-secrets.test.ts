/**
 * Build secrets on the real stack (docs/secrets.md): the `secrets` fixture's step hashes the
 * mounted secret into /npmrc.sha256, with the value from the request and from a scoped server
 * entry; the canary value is nowhere else (image bytes, logs, answers, argv); an entry scoped
 * elsewhere is not offered; bad input is a 400 with no clone; the files go with the request
 * however it ends (the cache and reuse: buildkit-secret-scopes.test.ts).
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  SECRETS_FIXTURE_DOCKERFILE,
  SECRETS_FIXTURE_ID,
  SLOW_FIXTURE_DOCKERFILE,
  SLOW_STEP_STARTED,
} from '../stack/fixtures.js';
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
import { eventually } from '../helpers/eventually.js';
import { imageBytes, imageLeaks, sampleProcesses, sha256Hex } from '../helpers/image-bytes.js';

const canary = (): string => `CANARY-${randomBytes(12).toString('hex')}`;
const npmrc = (token: string): string => `//npm.example.com/:_authToken=${token}\nalways-auth=true\n`;
const SECRETS_REPO = httpsRepo('secrets');
const HTTPS_HOST = new URL(stack.GIT_HTTPS_URL).hostname;

/**
 * A copy of the `secrets` (or `slow`) fixture for one test: BuildKit merges identical steps that
 * run at once, whatever their secrets, so each test's step must be its own (docs/secrets.md).
 */
function ownRepo(t: ExecutionContext, fixture: 'secrets' | 'slow'): { name: string; repository: string } {
  const nonce = randomBytes(8).toString('hex');
  const dockerfile =
    fixture === 'secrets'
      ? SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce)
      : SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce);
  const repo = ownDockerfileRepo(dockerfile);
  t.teardown(repo.remove);
  return repo;
}

const request = (name: string, extra: Record<string, unknown> = {}, repository = SECRETS_REPO) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name },
  ...extra,
});

/** The hash the image's step recorded (`<hex>  /run/secrets/npmrc`). */
async function recordedHash(name: string, tag: string): Promise<string> {
  const image = await imageBytes(stack.REGISTRY_ANON, name, tag);
  const file = image.files.get('npmrc.sha256');
  if (file === undefined) throw new Error(`no /npmrc.sha256 in ${name}:${tag}`);
  return file.toString().split(/\s+/)[0] ?? '';
}

function ok(t: ExecutionContext, res: BuildResponse): void {
  t.is(res.status, 200, JSON.stringify(res.body));
}

/** Every place a user or operator can read, searched for `value`'s canary. */
async function assertNowhere(t: ExecutionContext, running: RunningApp, res: BuildResponse, secret: string) {
  const image = await imageBytes(stack.REGISTRY_ANON, String(res.body.name), String(res.body.tag));
  t.true(image.layers.length > 0 && image.documents.length >= 3, 'the whole image was read');
  t.deepEqual(imageLeaks(image, secret), [], 'image: layers, configs, history, labels, manifests');
  for (const id of [res.body.gitCloneLogId, res.body.imageBuildLogId]) {
    const log = await fetchLog(running, id);
    t.is(log.status, 200);
    t.false(log.text.includes(secret), `log ${String(id)}`);
  }
  for (const path of ['/builds', '/metrics', '/config']) {
    const text = await (await fetch(`${running.url}${path}`)).text();
    t.false(text.includes(secret), path);
  }
  t.false(JSON.stringify(res.body).includes(secret), 'the answer');
  t.false(running.logText().includes(secret), 'the service log');
}

test('a request secret reaches the step and nothing else; its files go with the request', async (t) => {
  const running = await startBuildAppFor(t);
  const secret = canary();
  const sampler = sampleProcesses([secret]);
  const res = await postBuild(
    running,
    request(
      uniqueName('secret-request'),
      { buildSecrets: { npmrc: npmrc(secret) }, buildOptions: { noCache: true } },
      ownRepo(t, 'secrets').repository,
    ),
  );
  const sampled = sampler.stop();
  ok(t, res);
  t.is(await recordedHash(String(res.body.name), String(res.body.tag)), sha256Hex(npmrc(secret)));
  t.true(
    [...sampled.commands].some((c) => c.includes('buildx build')),
    [...sampled.commands].join(', '),
  );
  t.deepEqual(sampled.leaks, [], 'argv and environments sampled during the build');
  await assertNowhere(t, running, res, secret);
  const img = (await fetchLog(running, res.body.imageBuildLogId)).text;
  t.regex(img, /# build secrets offered: npmrc/);
  t.deepEqual(
    readdirSync(join(running.ctx.config.scratchDir, 'requests')),
    [],
    'request directories removed',
  );
});

test('a scoped server entry is offered to its repository only; elsewhere the required step fails', async (t) => {
  const serverValue = canary();
  const own = ownRepo(t, 'secrets');
  const running = await startBuildAppFor(t, {
    buildSecrets: [
      {
        id: SECRETS_FIXTURE_ID,
        value: npmrc(serverValue),
        repositories: [{ host: HTTPS_HOST, pathPrefix: `${own.name}.git` }],
      },
    ],
  });
  const res = await postBuild(
    running,
    request(uniqueName('secret-server'), { buildOptions: { noCache: true } }, own.repository),
  );
  ok(t, res);
  t.is(await recordedHash(String(res.body.name), String(res.body.tag)), sha256Hex(npmrc(serverValue)));
  await assertNowhere(t, running, res, serverValue);

  // The same Dockerfile in a repository outside the scope: npmrc is not offered.
  const other = ownDockerfileRepo(
    SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
  );
  t.teardown(other.remove);
  const requestValue = canary();
  const failed = await postBuild(running, {
    ...request(uniqueName('secret-outside')),
    repository: other.repository,
    buildSecrets: { unrelated: requestValue },
  });
  t.is(failed.status, 500, JSON.stringify(failed.body));
  t.regex(String(failed.body.logId), /^img-/);
  const log = (await fetchLog(running, failed.body.logId)).text;
  // BuildKit's own error (`ERROR: failed to solve: secret npmrc: not found`), then the CLI's trace.
  const tail = log.trimEnd().split('\n').slice(-20).join('\n');
  t.regex(tail, /failed to solve: secret npmrc: not found/, tail);
  t.regex(log, /# build secrets offered: unrelated\n/);
  t.false(log.includes(serverValue) || log.includes(requestValue));
  t.false(JSON.stringify(failed.body).includes(requestValue));
});

const BAD_INPUTS: readonly [string, unknown, RegExp][] = [
  ['an id outside the grammar', { '../npmrc': 'x' }, /invalid secret id/],
  ['a value that is not a string', { npmrc: 42 }, /must be a string/],
  ['a value over 64 KiB', { npmrc: 'x'.repeat(65_537) }, /larger than 65536 bytes/],
  [
    'more than 32 secrets',
    Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`s${i}`, 'v'])),
    /33 secrets given/,
  ],
];

test('each bad buildSecrets input answers 400 and clones nothing', async (t) => {
  const running = await startBuildAppFor(t);
  for (const [what, buildSecrets, text] of BAD_INPUTS) {
    const res = await postBuild(running, request(uniqueName('secret-bad'), { buildSecrets }));
    t.is(res.status, 400, what);
    t.regex(String(res.body.error), text, what);
  }
  const builds = (await (await fetch(`${running.url}/builds`)).json()) as { builds: unknown[] };
  t.deepEqual(builds.builds, [], 'no build was admitted');
  t.false(existsSync(join(running.ctx.config.scratchDir, 'requests')), 'no request directory, no clone');
  const logs = existsSync(join(running.ctx.config.scratchDir, 'logs'))
    ? readdirSync(join(running.ctx.config.scratchDir, 'logs'))
    : [];
  t.deepEqual(logs, [], 'no git or img log');
});

/** The secret file of the one request in flight, polled until the build has written it. */
async function secretFileOf(scratchDir: string): Promise<string> {
  return eventually(
    async () => {
      const ids = await readdir(join(scratchDir, 'requests')).catch(() => [] as string[]);
      return ids
        .map((id) => join(scratchDir, 'requests', id, 'build-secrets', 'npmrc'))
        .find((file) => existsSync(file));
    },
    { timeout: 120_000, interval: 50, what: 'a build secret file' },
  );
}

/** Polls `condition` until it holds. */
async function waitUntil(what: string, condition: () => Promise<boolean>, ms = 30_000): Promise<void> {
  await eventually(condition, { timeout: ms, interval: 50, what });
}

const slowRequest = (repository: string, label: string, secret: string) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name: uniqueName(label) },
  buildOptions: { noCache: true },
  buildSecrets: { npmrc: secret },
});

test('after a client disconnect, the request directory and its secret files are gone', async (t) => {
  const running = await startBuildAppFor(t);
  const scratch = running.ctx.config.scratchDir;
  const client = new AbortController();
  const abandoned = fetch(`${running.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(slowRequest(ownRepo(t, 'slow').repository, 'secret-cancel', canary())),
    signal: client.signal,
  }).catch((err: unknown) => err);
  const file = await secretFileOf(scratch);
  t.is(statSync(file).mode & 0o777, 0o600);
  await waitUntil(
    'the slow step runs',
    async () => {
      const logs = await readdir(join(scratch, 'logs')).catch(() => [] as string[]);
      const img = logs.find((name) => name.startsWith('img-'));
      const text =
        img === undefined ? '' : await readFile(join(scratch, 'logs', img), 'utf8').catch(() => '');
      return text.includes(SLOW_STEP_STARTED);
    },
    120_000,
  );
  client.abort();
  t.true((await abandoned) instanceof Error);
  await waitUntil(
    'the request directory is removed',
    async () => (await readdir(join(scratch, 'requests'))).length === 0,
  );
  t.false(existsSync(file));
});

test('after the deadline kills the build, the request directory and its secret files are gone', async (t) => {
  const running = await startBuildAppFor(t, { build: { timeoutSeconds: 20 } });
  const scratch = running.ctx.config.scratchDir;
  const answer = postBuild(running, slowRequest(ownRepo(t, 'slow').repository, 'secret-deadline', canary()));
  const file = await secretFileOf(scratch);
  const res = await answer;
  t.is(res.status, 500, JSON.stringify(res.body));
  t.regex(String(res.body.error), /timed out|deadline|timeout/i);
  t.false(existsSync(file));
  t.deepEqual(await readdir(join(scratch, 'requests')), []);
});
