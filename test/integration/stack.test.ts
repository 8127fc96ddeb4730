// The local real stack (test/stack) does what the other integration tests rely on: the builder
// builds and pushes through the real Dev Containers CLI, each registry has its auth behaviour, and
// every git server serves the fixtures. Needs `npm run stack -- up`.
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stackEnv } from '../stack/env.js';
import { branchDefinition } from '../stack/fixtures.js';
import { run } from '../stack/proc.js';
import { MANIFEST_ACCEPT, parseChallenge, registryFetch } from '../stack/registry-client.js';
import { toolEnv } from '../helpers/tool-env.js';

const env = stackEnv();
const DEVCONTAINER = path.resolve('node_modules/.bin/devcontainer');

interface Descriptor {
  mediaType: string;
  digest: string;
  platform?: { os: string; architecture: string };
  annotations?: Record<string, string>;
}

function tmp(t: { teardown(fn: () => void): void }, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** git's environment: HOME and TMPDIR in a directory of this file's, removed when it ends. */
const gitHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ibs-stacktest-git-'));
test.after.always(() => fs.rmSync(gitHome, { recursive: true, force: true }));

function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...toolEnv(gitHome),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}

const sshCommand = `ssh -F /dev/null -i ${env.GIT_SSH_KEY_FILE} -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=${env.GIT_SSH_KNOWN_HOSTS_FILE} -o StrictHostKeyChecking=yes`;

const httpsAuthEnv = {
  GIT_SSL_CAINFO: env.GIT_CA_FILE,
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'http.extraHeader',
  GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`${env.GIT_HTTPS_USER}:${env.GIT_HTTPS_PASSWORD}`).toString('base64')}`,
};

/** A remote buildx builder on STACK_BUILDER_ENDPOINT in a fresh DOCKER_CONFIG. */
async function remoteBuilder(t: { teardown(fn: () => void): void }): Promise<NodeJS.ProcessEnv> {
  const dockerConfig = tmp(t, 'ibs-stacktest-docker-');
  const name = `stacktest-${crypto.randomBytes(4).toString('hex')}`;
  // The Dev Containers CLI keeps a cache in <TMPDIR>/devcontainercli-<user>: here, in the test's own.
  const benv = toolEnv(tmp(t, 'ibs-stacktest-home-'), { DOCKER_CONFIG: dockerConfig });
  await run(
    'docker',
    ['buildx', 'create', '--name', name, '--driver', 'remote', env.STACK_BUILDER_ENDPOINT],
    {
      env: benv,
    },
  );
  return { ...benv, BUILDX_BUILDER: name };
}

async function readJson<T>(res: Response): Promise<T> {
  if (res.status !== 200) throw new Error(`unexpected status ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function imageConfig(
  host: string,
  repo: string,
  digest: string,
): Promise<{ config: { Labels?: Record<string, string> } }> {
  const manifest = await readJson<{ config: { digest: string } }>(
    await registryFetch(host, `/v2/${repo}/manifests/${digest}`, { headers: { accept: MANIFEST_ACCEPT } }),
  );
  return readJson(await registryFetch(host, `/v2/${repo}/blobs/${manifest.config.digest}`));
}

async function devcontainerBuild(
  buildEnv: NodeJS.ProcessEnv,
  workspace: string,
  image: string,
  extra: string[] = [],
): Promise<void> {
  const { stdout } = await run(
    DEVCONTAINER,
    [
      'build',
      '--workspace-folder',
      workspace,
      '--image-name',
      image,
      '--push',
      '--omit-syntax-directive',
      ...extra,
    ],
    { env: buildEnv, timeoutMs: 240_000 },
  );
  const outcome = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { outcome?: string };
  if (outcome.outcome !== 'success') throw new Error(`devcontainer build failed: ${stdout}`);
}

test('the Dev Containers CLI builds the image fixture through the builder and pushes it; the manifest reads back', async (t) => {
  const buildEnv = await remoteBuilder(t);
  const work = tmp(t, 'ibs-stacktest-clone-');
  await run('git', ['clone', '-q', `${env.GIT_HTTP_URL}/image.git`, work], { env: gitEnv() });
  const repo = `stacktest/x-${crypto.randomBytes(4).toString('hex')}`;
  await devcontainerBuild(buildEnv, work, `${env.REGISTRY_ANON}/${repo}:1`);

  const res = await registryFetch(env.REGISTRY_ANON, `/v2/${repo}/manifests/1`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  const index = await readJson<{ mediaType: string; manifests: Descriptor[] }>(res);
  t.is(index.mediaType, 'application/vnd.oci.image.index.v1+json');
  const platforms = index.manifests.map((m) => `${m.platform?.os}/${m.platform?.architecture}`);
  t.deepEqual(platforms.sort(), ['linux/amd64', 'unknown/unknown']);
  const attestation = index.manifests.find((m) => m.platform?.architecture === 'unknown');
  t.is(attestation?.annotations?.['vnd.docker.reference.type'], 'attestation-manifest');

  const amd64 = index.manifests.find((m) => m.platform?.architecture === 'amd64')!;
  const config = await imageConfig(env.REGISTRY_ANON, repo, amd64.digest);
  const metadata = JSON.parse(config.config.Labels?.['devcontainer.metadata'] ?? '[]') as Array<
    Record<string, unknown>
  >;
  t.true(metadata.some((m) => m.postCreateCommand === 'echo fixture-image post-create'));
  t.true(metadata.some((m) => JSON.stringify(m.customizations ?? {}).includes('ibs.fixture-image')));

  // The anonymous registry allows deletion (the no-delete one does not, see below).
  const del = await registryFetch(
    env.REGISTRY_ANON,
    `/v2/${repo}/manifests/${res.headers.get('docker-content-digest')}`,
    {
      method: 'DELETE',
    },
  );
  t.is(del.status, 202);
});

test('the dockerfile fixture builds (RUN on the base image) and BuildKit pushes it to the token and Basic registries', async (t) => {
  const buildEnv = await remoteBuilder(t);
  const auth = (user: string, password: string) => ({
    auth: Buffer.from(`${user}:${password}`).toString('base64'),
  });
  fs.writeFileSync(
    path.join(buildEnv.DOCKER_CONFIG!, 'config.json'),
    JSON.stringify({
      auths: {
        [env.REGISTRY_TOKEN]: auth(env.REGISTRY_TOKEN_USER, env.REGISTRY_TOKEN_PASSWORD),
        [env.REGISTRY_BASIC]: auth(env.REGISTRY_BASIC_USER, env.REGISTRY_BASIC_PASSWORD),
      },
    }),
  );
  const work = tmp(t, 'ibs-stacktest-clone-');
  await run('git', ['clone', '-q', `${env.GIT_SSH_URL}/dockerfile.git`, work], {
    env: gitEnv({ GIT_SSH_COMMAND: sshCommand }),
  });
  const count = async () =>
    ((await (await fetch(env.TOKEN_ISSUER_COUNT_URL)).json()) as { issued: number }).issued;
  const before = await count();
  const repo = `stacktest/dockerfile-${crypto.randomBytes(4).toString('hex')}`;
  for (const [host, user, password] of [
    [env.REGISTRY_TOKEN, env.REGISTRY_TOKEN_USER, env.REGISTRY_TOKEN_PASSWORD],
    [env.REGISTRY_BASIC, env.REGISTRY_BASIC_USER, env.REGISTRY_BASIC_PASSWORD],
  ] as const) {
    await devcontainerBuild(buildEnv, work, `${host}/${repo}:1`);
    const creds = { user, password };
    const index = await readJson<{ manifests: Descriptor[] }>(
      await registryFetch(host, `/v2/${repo}/manifests/1`, { headers: { accept: MANIFEST_ACCEPT }, creds }),
    );
    const amd64 = index.manifests.find((m) => m.platform?.architecture === 'amd64')!;
    const manifest = await readJson<{ config: { digest: string } }>(
      await registryFetch(host, `/v2/${repo}/manifests/${amd64.digest}`, {
        headers: { accept: MANIFEST_ACCEPT },
        creds,
      }),
    );
    const config = await readJson<{ config: { Labels?: Record<string, string> } }>(
      await registryFetch(host, `/v2/${repo}/blobs/${manifest.config.digest}`, { creds }),
    );
    t.is(config.config.Labels?.['ibs.fixture'], 'dockerfile', host);
    t.regex(config.config.Labels?.['devcontainer.metadata'] ?? '', /cat \/greeting/, host);
  }
  t.true((await count()) > before);
});

test('a local feature builds for linux/amd64 and linux/386 (RUN steps on both)', async (t) => {
  const buildEnv = await remoteBuilder(t);
  const work = tmp(t, 'ibs-stacktest-clone-');
  await run('git', ['clone', '-q', `${env.GIT_DAEMON_URL}/feature.git`, work], { env: gitEnv() });
  const repo = `stacktest/feature-${crypto.randomBytes(4).toString('hex')}`;
  // The CLI (0.89.0) parses `--platform a,b` as one platform when it reads the base image from the
  // registry, finds no match and falls back to `docker pull` + `docker inspect`: that needs an
  // engine, so multi-platform builds get the stack's dockerd as DOCKER_HOST.
  await devcontainerBuild(
    { ...buildEnv, DOCKER_HOST: env.STACK_DOCKER_HOST },
    work,
    `${env.REGISTRY_ANON}/${repo}:1`,
    ['--platform', 'linux/amd64,linux/386'],
  );
  const index = await readJson<{ manifests: Descriptor[] }>(
    await registryFetch(env.REGISTRY_ANON, `/v2/${repo}/manifests/1`, {
      headers: { accept: MANIFEST_ACCEPT },
    }),
  );
  const archs = index.manifests.map((m) => m.platform?.architecture).filter((a) => a !== 'unknown');
  t.deepEqual(archs.sort(), ['386', 'amd64']);
  const i386 = index.manifests.find((m) => m.platform?.architecture === '386')!;
  const config = await imageConfig(env.REGISTRY_ANON, repo, i386.digest);
  t.regex(config.config.Labels?.['devcontainer.metadata'] ?? '', /ibs\.hello-feature/);
});

test('anonymous registries answer 200 and hold the multi-platform base image', async (t) => {
  for (const [host, base] of [
    [env.REGISTRY_ANON, env.BASE_IMAGE_ANON],
    [env.REGISTRY_NODELETE, env.BASE_IMAGE_NODELETE],
  ] as const) {
    t.is((await fetch(`http://${host}/v2/`)).status, 200);
    t.is(base, `${host}/dev/base:1`);
    const index = await readJson<{ manifests: Descriptor[] }>(
      await fetch(`http://${host}/v2/dev/base/manifests/1`, { headers: { accept: MANIFEST_ACCEPT } }),
    );
    const archs = index.manifests.map((m) => m.platform?.architecture).filter((a) => a !== 'unknown');
    t.deepEqual(archs.sort(), ['386', 'amd64']);
  }
});

test('the no-delete registry answers 405 UNSUPPORTED to a manifest DELETE', async (t) => {
  const head = await fetch(`http://${env.REGISTRY_NODELETE}/v2/dev/base/manifests/1`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
  });
  const digest = head.headers.get('docker-content-digest');
  t.truthy(digest);
  const del = await fetch(`http://${env.REGISTRY_NODELETE}/v2/dev/base/manifests/${digest}`, {
    method: 'DELETE',
  });
  t.is(del.status, 405);
  const body = (await del.json()) as { errors: Array<{ code: string }> };
  t.is(body.errors[0]?.code, 'UNSUPPORTED');
});

test('the Basic registry wants its htpasswd credentials', async (t) => {
  const url = `http://${env.REGISTRY_BASIC}/v2/dev/base/manifests/1`;
  const anon = await fetch(url, { headers: { accept: MANIFEST_ACCEPT } });
  t.is(anon.status, 401);
  t.is(parseChallenge(anon.headers.get('www-authenticate') ?? '').scheme, 'basic');
  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const wrong = await fetch(url, {
    headers: { accept: MANIFEST_ACCEPT, authorization: basic(env.REGISTRY_BASIC_USER, 'nope') },
  });
  t.is(wrong.status, 401);
  const ok = await fetch(url, {
    headers: {
      accept: MANIFEST_ACCEPT,
      authorization: basic(env.REGISTRY_BASIC_USER, env.REGISTRY_BASIC_PASSWORD),
    },
  });
  t.is(ok.status, 200);
});

test('the token registry sends clients to the issuer, which grants scopes and counts tokens', async (t) => {
  const url = `http://${env.REGISTRY_TOKEN}/v2/dev/base/manifests/1`;
  const anon = await fetch(url, { headers: { accept: MANIFEST_ACCEPT } });
  t.is(anon.status, 401);
  const { scheme, params } = parseChallenge(anon.headers.get('www-authenticate') ?? '');
  t.is(scheme, 'bearer');
  t.is(params.realm, env.TOKEN_ISSUER_URL);
  t.is(params.service, env.REGISTRY_TOKEN_SERVICE);

  const count = async () =>
    ((await (await fetch(env.TOKEN_ISSUER_COUNT_URL)).json()) as { issued: number }).issued;
  const before = await count();
  const realm = new URL(env.TOKEN_ISSUER_URL);
  realm.searchParams.set('service', env.REGISTRY_TOKEN_SERVICE);
  realm.searchParams.set('scope', 'repository:dev/base:pull');
  const basic = `Basic ${Buffer.from(`${env.REGISTRY_TOKEN_USER}:${env.REGISTRY_TOKEN_PASSWORD}`).toString('base64')}`;
  const got = await fetch(realm, { headers: { authorization: basic } });
  t.is(got.status, 200);
  const body = (await got.json()) as { token: string; expires_in: number; issued_at: string };
  t.true(body.expires_in > 0);
  t.false(Number.isNaN(Date.parse(body.issued_at)));
  t.true((await count()) > before);
  const pulled = await fetch(url, {
    headers: { accept: MANIFEST_ACCEPT, authorization: `Bearer ${body.token}` },
  });
  t.is(pulled.status, 200);

  // BuildKit's OAuth2 password grant.
  const form = new URLSearchParams({
    grant_type: 'password',
    username: env.REGISTRY_TOKEN_USER,
    password: env.REGISTRY_TOKEN_PASSWORD,
    service: env.REGISTRY_TOKEN_SERVICE,
    scope: 'repository:dev/base:pull',
    client_id: 'stacktest',
  });
  const posted = await fetch(env.TOKEN_ISSUER_URL, { method: 'POST', body: form });
  t.is(posted.status, 200);
  const oauth = (await posted.json()) as { access_token: string };
  const pulled2 = await fetch(url, {
    headers: { accept: MANIFEST_ACCEPT, authorization: `Bearer ${oauth.access_token}` },
  });
  t.is(pulled2.status, 200);

  const wrong = await fetch(realm, {
    headers: { authorization: `Basic ${Buffer.from(`${env.REGISTRY_TOKEN_USER}:nope`).toString('base64')}` },
  });
  t.is(wrong.status, 401);
});

test('every git server serves the fixtures (https with Basic + CA, ssh with a pinned host key, git://, http)', async (t) => {
  const expected = (
    await run('git', ['--git-dir', path.join(env.GIT_REPOS_DIR, 'image.git'), 'rev-parse', 'main'], {
      env: gitEnv(),
    })
  ).stdout.trim();
  const cases: Array<[string, string, NodeJS.ProcessEnv]> = [
    ['https', `${env.GIT_HTTPS_URL}/image.git`, httpsAuthEnv],
    ['ssh', `${env.GIT_SSH_URL}/image.git`, { GIT_SSH_COMMAND: sshCommand }],
    ['git', `${env.GIT_DAEMON_URL}/image.git`, {}],
    ['http', `${env.GIT_HTTP_URL}/image.git`, {}],
  ];
  for (const [name, url, extra] of cases) {
    const dir = tmp(t, `ibs-stacktest-${name}-`);
    await run('git', ['clone', '-q', url, dir], { env: gitEnv(extra) });
    const head = (await run('git', ['-C', dir, 'rev-parse', 'HEAD'], { env: gitEnv() })).stdout.trim();
    t.is(head, expected, name);
    t.true(fs.existsSync(path.join(dir, '.devcontainer/devcontainer.json')), name);
  }
  // Without credentials the HTTPS server refuses.
  const refused = await run('git', ['ls-remote', `${env.GIT_HTTPS_URL}/image.git`], {
    env: gitEnv({ GIT_SSL_CAINFO: env.GIT_CA_FILE }),
  }).catch((err: Error) => err);
  t.true(refused instanceof Error);
  t.regex(String(refused), /401|Authentication failed|could not read Username/);
});

test('the branches fixture has main, dev and v1.0.0 with different definitions; empty has no commits', async (t) => {
  const refs = (await run('git', ['ls-remote', `${env.GIT_DAEMON_URL}/branches.git`], { env: gitEnv() }))
    .stdout;
  t.regex(refs, /\trefs\/heads\/main\n/);
  t.regex(refs, /\trefs\/heads\/dev\n/);
  t.regex(refs, /\trefs\/tags\/v1\.0\.0\n/);
  for (const ref of ['main', 'dev', 'v1.0.0'] as const) {
    const dir = tmp(t, `ibs-stacktest-branches-`);
    await run('git', ['clone', '-q', '--branch', ref, `${env.GIT_HTTP_URL}/branches.git`, dir], {
      env: gitEnv(),
    });
    const def = JSON.parse(
      fs.readFileSync(path.join(dir, '.devcontainer/devcontainer.json'), 'utf8'),
    ) as unknown;
    t.deepEqual(def, branchDefinition(env.BASE_IMAGE_ANON, ref));
  }
  const empty = (await run('git', ['ls-remote', `${env.GIT_DAEMON_URL}/empty.git`], { env: gitEnv() }))
    .stdout;
  t.is(empty.trim(), '');
});
