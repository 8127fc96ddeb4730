/**
 * Answered commits on the real stack: a request whose branch head this service already answered
 * for the same request shape is answered from that record. The service's git runs through a
 * wrapper on its PATH that writes each command line to a file, so "no clone" is read exactly:
 * no git process at all (the branch's head is read from `info/refs` in process). A moved head, a feature republished under its tag, a deleted
 * image and changed options each take the full path and answer correctly; the answered image
 * keeps its provenance, and `cosign verify` passes.
 */
import test, { type ExecutionContext } from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { loadSigningKey } from '../../src/config/signing-key.js';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
  type BuildResponse,
} from '../helpers/build-support.js';
import { metricValue } from '../helpers/metrics.js';
import { publishFeature, readImage, testRepo } from '../helpers/reuse-support.js';
import { toolEnv } from '../helpers/tool-env.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';

const REGISTRY = stack.REGISTRY_ANON;
const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** A `git` first on the service's PATH that appends its arguments to `<dir>/git.log`, then runs git. */
async function gitRecorder(
  t: ExecutionContext,
): Promise<{ path: string; commands: () => Promise<string[]> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-git-recorder-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const logFile = join(dir, 'git.log');
  const real = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
  await writeFile(join(dir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${logFile}'\nexec '${real}' "$@"\n`);
  await chmod(join(dir, 'git'), 0o755);
  await writeFile(logFile, '');
  return {
    path: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    commands: async () => (await readFile(logFile, 'utf8')).split('\n').filter((line) => line !== ''),
  };
}

async function answered(t: ExecutionContext, app: RunningApp, res: BuildResponse) {
  const img = await fetchLog(app, res.body.imageBuildLogId ?? res.body.logId);
  if (res.status !== 200)
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${img.text}`);
  return { img: img.text, git: (await fetchLog(app, res.body.gitCloneLogId)).text };
}

const NO_CLONE = /reused, no build, no clone/;
const ranCli = (log: string): boolean => log.includes('devcontainer build');

async function keyPair(dir: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const key = join(dir, 'ours.key');
  const pub = join(dir, 'ours.pub');
  await writeFile(key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  await writeFile(pub, publicKey.export({ type: 'spki', format: 'pem' }));
  return { key, pub };
}

async function cosignVerify(pub: string, ref: string) {
  return execa(
    stack.COSIGN_BIN,
    ['verify', '--key', pub, '--insecure-ignore-tlog=true', '--allow-insecure-registry=true', ref],
    {
      reject: false,
      env: toolEnv(tmpdir(), { DOCKER_CONFIG: join(tmpdir(), 'ibs-cosign-none') }),
      extendEnv: false,
    },
  );
}

/** The predicate types of the attestation manifest of the index's linux image. */
async function attestationTypes(name: string, digest: string): Promise<string[]> {
  const get = async (ref: string) =>
    (await (
      await registryFetch(REGISTRY, `/v2/${name}/manifests/${ref}`, { headers: { accept: MANIFEST_ACCEPT } })
    ).json()) as {
      manifests?: Array<{ digest: string; annotations?: Record<string, string> }>;
      layers?: Array<{ annotations?: Record<string, string> }>;
    };
  const index = await get(digest);
  const attestation = (index.manifests ?? []).find(
    (m) => m.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest',
  );
  if (attestation === undefined) return [];
  return ((await get(attestation.digest)).layers ?? []).map(
    (l) => l.annotations?.['in-toto.io/predicate-type'] ?? '',
  );
}

test('an unchanged commit is answered without a clone; its provenance and signature hold', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { key, pub } = await keyPair(dir);
  const signing = loadSigningKey(key, undefined);
  if (typeof signing === 'string') return t.fail(signing);
  const git = await gitRecorder(t);
  const app = await startBuildApp({
    build: { reuse: true, provenance: 'min' },
    signing,
    childEnv: { PATH: git.path, GIT_SSL_CAINFO: stack.GIT_CA_FILE },
  });
  t.teardown(app.close);
  const repo = await testRepo('answered');
  t.teardown(repo.dispose);
  const name = uniqueName('answered');
  const body = { repository: repo.url, gitCredentials: httpsCreds(), image: { registry: REGISTRY, name } };
  const commit = await repo.commit({
    '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON, remoteEnv: { A: '1' } }),
    'README.md': '# answered\n',
  });
  const built = await postBuild(app, body);
  const first = await answered(t, app, built);
  t.true(ranCli(first.img), first.img);
  t.regex(first.img, /# stages: .*#12 build and push/);

  for (let i = 0; i < 2; i++) {
    const before = (await git.commands()).length;
    const again = await postBuild(app, body);
    const logs = await answered(t, app, again);
    const commands = (await git.commands()).slice(before);
    // Over https the branch's head is read from `info/refs` in process: no git process at all.
    t.deepEqual(commands, [], `no git process ran: ${commands.join('\n')}`);
    t.regex(logs.img, NO_CLONE);
    t.regex(logs.img, /# stages: #3 look up the answered commits /);
    t.regex(logs.img, /# already signed sha256:/);
    t.regex(logs.git, /^GET https:\/\/\S+\/info\/refs\?service=git-upload-pack\n/);
    t.regex(logs.git, /nothing cloned/);
    t.is(again.body.commit, commit);
    t.is(again.body.digest, built.body.digest);
    t.is(again.body.image, built.body.image);
  }
  t.is(await metricValue(app.url, 'service_build_reuses_total'), 2);
  t.is(await metricValue(app.url, 'service_builds_total', { status: 'success' }), 3);
  const records = (await (
    await fetch(`${app.url}/builds?repository=${encodeURIComponent(repo.url)}`)
  ).json()) as {
    builds: Array<{ commit?: string; status?: string; imageBuildLogId?: string }>;
  };
  t.is(records.builds.length, 3);
  t.true(records.builds.every((b) => b.commit === commit && b.status === 'success'));
  const ref = `${REGISTRY}/${name}@${String(built.body.digest)}`;
  const verified = await cosignVerify(pub, ref);
  t.is(verified.exitCode, 0, verified.stderr);
  t.true(
    (await attestationTypes(name, String(built.body.digest))).some((p) =>
      p.startsWith('https://slsa.dev/provenance/'),
    ),
  );
});

test('a moved head, a republished feature, a deleted image and changed options take the full path', async (t) => {
  const git = await gitRecorder(t);
  const app = await startBuildApp({
    build: { reuse: true },
    childEnv: { PATH: git.path, GIT_SSL_CAINFO: stack.GIT_CA_FILE },
  });
  t.teardown(app.close);
  const ns = uniqueName('answered-paths');
  const publish = (version: string, line: string) =>
    publishFeature(REGISTRY, `${ns}/features`, 'greet', version, line);
  await publish('1.0.0', 'echo greet 1 > /etc/greet');
  const feature = `${REGISTRY}/${ns}/features/greet:1`;
  const repo = await testRepo('answered-paths');
  t.teardown(repo.dispose);
  const name = `${ns}/app`;
  const body = { repository: repo.url, gitCredentials: httpsCreds(), image: { registry: REGISTRY, name } };
  const first = await repo.commit({
    '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON, features: { [feature]: {} } }),
    'README.md': '# paths\n',
  });
  const built = await postBuild(app, body);
  t.true(ranCli((await answered(t, app, built)).img));

  // The full path reads the commit's trees (in process over https, or by a git clone); the
  // answered commits read none: their git log says "nothing cloned".
  const fullPath = async (res: BuildResponse): Promise<boolean> => {
    const logs = await answered(t, app, res);
    return (
      !NO_CLONE.test(logs.img) &&
      /read in process|\bclone\b/.test(logs.git) &&
      !/nothing cloned/.test(logs.git)
    );
  };

  // A new version of the feature published under its tag `1`: the record no longer answers; the key changed, so it builds.
  await publish('1.0.1', 'echo greet 2 > /etc/greet');
  const republished = await postBuild(app, body);
  const republishedLogs = await answered(t, app, republished);
  t.true(await fullPath(republished), republishedLogs.img);
  t.regex(
    republishedLogs.img,
    /answered before as .* but moved since: feature .*greet:1: sha256:\S+ -> sha256:/,
  );
  t.true(ranCli(republishedLogs.img), republishedLogs.img);
  t.is(republished.body.commit, first);
  t.not(republished.body.digest, built.body.digest);
  // ...and that answer is the record now.
  const again = await postBuild(app, body);
  t.false(await fullPath(again));
  t.is(again.body.digest, republished.body.digest);

  // A deleted image: the full path builds it again.
  const deleted = await fetch(
    `${app.url}/image?registry=${REGISTRY}&name=${name}&tag=sha-${first.slice(0, 7)}`,
    { method: 'DELETE' },
  );
  t.is(deleted.status, 200);
  const rebuilt = await postBuild(app, body);
  const rebuiltLogs = await answered(t, app, rebuilt);
  t.true(await fullPath(rebuilt));
  t.regex(rebuiltLogs.img, /its image \S+ is gone: full path/);
  t.true(ranCli(rebuiltLogs.img));
  t.is(rebuilt.body.commit, first);
  t.truthy(await readImage(REGISTRY, name, `sha-${first.slice(0, 7)}`));

  // A moved head: the new commit is cloned (and reused by key: its inputs did not change).
  const second = await repo.commit({ 'README.md': '# paths, moved\n' });
  const moved = await postBuild(app, body);
  const movedLogs = await answered(t, app, moved);
  t.true(await fullPath(moved));
  t.is(moved.body.commit, second);
  t.false(ranCli(movedLogs.img));
  t.regex(movedLogs.img, /inputs unchanged since .*: reused, no build/);

  // Changed options: another request shape, the full path (here: another platform list builds).
  const platforms = await postBuild(app, { ...body, platforms: ['linux/amd64'] });
  const platformsLogs = await answered(t, app, platforms);
  t.true(await fullPath(platforms));
  t.true(ranCli(platformsLogs.img));
  t.is(platforms.body.commit, second);
  // That build wrote the same tag: the first shape's record no longer matches what the registry
  // serves, so it takes the full path (a reuse by key) and answers what it writes.
  const overwritten = await postBuild(app, body);
  const overwrittenLogs = await answered(t, app, overwritten);
  t.true(await fullPath(overwritten));
  t.regex(overwrittenLogs.img, /is now sha256:[0-9a-f]{64}, not sha256:[0-9a-f]{64}: full path/);
  t.is(overwritten.body.commit, second);
  t.is(
    (await readImage(REGISTRY, name, `sha-${second.slice(0, 7)}`))?.digest,
    String(overwritten.body.digest),
  );
});
