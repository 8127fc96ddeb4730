/**
 * Supply chain on the real stack: built images carry BuildKit's provenance (and an SBOM with a
 * local generator); a reuse re-issues them for the manifest it writes, read back with buildx
 * imagetools; with a signing key, `cosign verify` passes for built and reused digests and fails
 * for another key or an image pushed over the tag; the key appears nowhere.
 */
import test, { type ExecutionContext } from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { loadSigningKey } from '../../src/config/signing-key.js';
import type { BuildDefaults, SigningKey } from '../../src/config/types.js';
import { PUSH_ACTIONS, RegistryClient } from '../../src/registry/client.js';
import { parseImageString } from '../../src/registry/image-string.js';
import { REUSE_BUILD_TYPE } from '../../src/supply-chain/in-toto.js';
import { ImageSigner } from '../../src/supply-chain/signer.js';
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
import { cmdlineOf, descendantPids } from '../helpers/processes.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { testRepo, type TestRepo } from '../helpers/reuse-support.js';
import { toolEnv } from '../helpers/tool-env.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';

const COSIGN = stack.COSIGN_BIN;
const REGISTRY = stack.REGISTRY_ANON;
const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

const definition = (extra = ''): Record<string, string> => ({
  '.devcontainer/devcontainer.json': json({ build: { dockerfile: 'Dockerfile' } }),
  '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo supply > /etc/supply${extra}\n`,
  'README.md': '# supply chain\n',
});

type Json = Record<string, unknown>;
interface Descriptor {
  digest: string;
  platform?: { os: string; architecture: string };
  annotations?: Record<string, string>;
}

async function manifest(name: string, ref: string): Promise<{ digest: string; json: Json }> {
  const res = await registryFetch(REGISTRY, `/v2/${name}/manifests/${ref}`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  if (res.status !== 200) throw new Error(`${name}:${ref}: ${res.status}`);
  return { digest: res.headers.get('docker-content-digest') ?? '', json: (await res.json()) as Json };
}

async function blob(name: string, digest: string): Promise<Json> {
  return (await (await registryFetch(REGISTRY, `/v2/${name}/blobs/${digest}`)).json()) as Json;
}

/** The index's platform manifests and, for each, the statements of its attestation manifest by predicate type. */
async function attestations(name: string, tag: string) {
  const index = await manifest(name, tag);
  const entries = (index.json.manifests ?? []) as Descriptor[];
  const platform = entries.find((e) => e.platform?.os === 'linux');
  const attestation = entries.find(
    (e) =>
      e.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest' &&
      e.annotations['vnd.docker.reference.digest'] === platform?.digest,
  );
  const statements: Record<string, Json> = {};
  if (attestation !== undefined) {
    const layers = ((await manifest(name, attestation.digest)).json.layers ?? []) as Descriptor[];
    for (const layer of layers) {
      statements[layer.annotations?.['in-toto.io/predicate-type'] ?? ''] = await blob(name, layer.digest);
    }
  }
  return { index: index.digest, platform: platform?.digest, attestation: attestation?.digest, statements };
}

const provenanceOf = (statements: Record<string, Json>): Json | undefined =>
  Object.entries(statements).find(([type]) => type.startsWith('https://slsa.dev/provenance/'))?.[1];

async function imgLog(t: ExecutionContext, app: RunningApp, res: BuildResponse): Promise<string> {
  const log = await fetchLog(app, res.body.imageBuildLogId ?? res.body.logId);
  if (res.status !== 200)
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  return log.text;
}

interface Scenario {
  app: RunningApp;
  repo: TestRepo;
  name: string;
  body: Json;
}

async function scenario(
  t: ExecutionContext,
  label: string,
  build: Partial<BuildDefaults>,
  signing?: SigningKey,
): Promise<Scenario> {
  const app = await startBuildApp({ build: { reuse: true, ...build }, ...(signing ? { signing } : {}) });
  t.teardown(app.close);
  const repo = await testRepo(label);
  t.teardown(repo.dispose);
  const name = uniqueName(label);
  return {
    app,
    repo,
    name,
    body: { repository: repo.url, gitCredentials: httpsCreds(), image: { registry: REGISTRY, name } },
  };
}

/** Builds the definition, then reuses it for a commit that changes only the README. */
async function buildThenReuse(t: ExecutionContext, s: Scenario) {
  const first = await s.repo.commit(definition());
  const built = await postBuild(s.app, s.body);
  const builtLog = await imgLog(t, s.app, built);
  t.true(builtLog.includes('devcontainer build'), 'the first request builds');
  const second = await s.repo.commit({ 'README.md': '# supply chain\n\nchanged\n' });
  const reused = await postBuild(s.app, s.body);
  const reusedLog = await imgLog(t, s.app, reused);
  t.regex(reusedLog, /reused, no build/);
  return { first, second, built, reused, builtLog, reusedLog };
}

test('a reuse re-issues provenance for the manifest it writes; imagetools reads it', async (t) => {
  const s = await scenario(t, 'provenance', { provenance: 'min' });
  const { first, second, reused, reusedLog } = await buildThenReuse(t, s);
  const built = await attestations(s.name, `sha-${first.slice(0, 7)}`);
  t.truthy(provenanceOf(built.statements), 'BuildKit attests the built image');
  const again = await attestations(s.name, `sha-${second.slice(0, 7)}`);
  t.is(again.index, String(reused.body.digest));
  t.not(again.platform, built.platform);
  const statement = provenanceOf(again.statements) as Json;
  t.truthy(statement, 'the reused image has a provenance attestation');
  const subject = (statement.subject as Array<{ digest: { sha256: string } }>)[0];
  t.is(
    `sha256:${subject?.digest.sha256}`,
    String(again.platform),
    'the subject is the platform manifest of the index',
  );
  t.regex(reusedLog, /provenance re-issued/);

  const { stdout } = await execa(
    'docker',
    [
      'buildx',
      'imagetools',
      'inspect',
      '--format',
      '{{json .Provenance}}',
      `${REGISTRY}/${s.name}:sha-${second.slice(0, 7)}`,
    ],
    { env: { DOCKER_CONFIG: stack.STACK_DOCKER_CONFIG } },
  );
  // One platform: imagetools prints its provenance without the platform key.
  const printed = JSON.parse(stdout) as { SLSA: { buildDefinition: Json; runDetails: Json } };
  const slsa = printed.SLSA;
  t.is(slsa.buildDefinition.buildType, REUSE_BUILD_TYPE);
  t.like(slsa.buildDefinition.externalParameters as Json, {
    repository: s.repo.url,
    ref: 'main',
    commit: second,
  });
  const deps = slsa.buildDefinition.resolvedDependencies as Array<{
    uri: string;
    digest: { sha256: string };
  }>;
  t.true(
    deps.some((d) => d.uri === `${REGISTRY}/${s.name}@${built.index}`),
    'the source image by digest',
  );
  t.true(
    deps.some((d) => `sha256:${d.digest.sha256}` === built.attestation),
    "the source's provenance by digest",
  );
  t.deepEqual(slsa.runDetails.builder, {
    id: 'urn:image-build-service:builder',
    version: { 'image-build-service': s.app.ctx.config.version },
  });
});

test('a source image without attestations gives the service provenance only, and the log says so', async (t) => {
  const s = await scenario(t, 'no-attest', { provenance: 'off' });
  await s.repo.commit(definition());
  t.is((await postBuild(s.app, s.body)).status, 200);
  const later = await startBuildApp({ build: { reuse: true, provenance: 'min' } });
  t.teardown(later.close);
  const second = await s.repo.commit({ 'README.md': 'changed\n' });
  const reused = await postBuild(later, s.body);
  t.regex(await imgLog(t, later, reused), /the source image has no attestations/);
  const statement = provenanceOf(
    (await attestations(s.name, `sha-${second.slice(0, 7)}`)).statements,
  ) as Json;
  const predicate = statement.predicate as { buildDefinition: { resolvedDependencies: unknown[] } };
  t.is(predicate.buildDefinition.resolvedDependencies.length, 1, 'the source image only');
});

test('with --build-sbom and a local generator, built and reused images carry an SBOM for their own subject', async (t) => {
  const s = await scenario(t, 'sbom', { sbom: true, sbomGenerator: stack.SBOM_GENERATOR_IMAGE });
  const { first, second } = await buildThenReuse(t, s);
  const spdx = 'https://spdx.dev/Document';
  const built = await attestations(s.name, `sha-${first.slice(0, 7)}`);
  t.truthy(built.statements[spdx], 'the built image has an SBOM');
  const reused = await attestations(s.name, `sha-${second.slice(0, 7)}`);
  const sbom = reused.statements[spdx] as Json;
  t.truthy(sbom, 'the reuse carries it');
  t.deepEqual(sbom.predicate, built.statements[spdx]?.predicate, 'the same SBOM content');
  const subject = (sbom.subject as Array<{ digest: { sha256: string } }>)[0];
  t.is(`sha256:${subject?.digest.sha256}`, String(reused.platform));
});

async function keyPair(dir: string, label: string, password?: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const key = join(dir, `${label}.key`);
  const pub = join(dir, `${label}.pub`);
  const pem = privateKey
    .export(
      password === undefined
        ? { type: 'pkcs8', format: 'pem' }
        : { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: password },
    )
    .toString();
  await writeFile(key, pem, { mode: 0o600 });
  await writeFile(pub, publicKey.export({ type: 'spki', format: 'pem' }));
  return { key, pub, pem };
}

async function cosignVerify(pub: string, ref: string) {
  return execa(
    COSIGN,
    ['verify', '--key', pub, '--insecure-ignore-tlog=true', '--allow-insecure-registry=true', ref],
    {
      reject: false,
      env: toolEnv(tmpdir(), { DOCKER_CONFIG: join(tmpdir(), 'ibs-cosign-none') }),
      extendEnv: false,
    },
  );
}

test('cosign verifies built and reused images; another key and an image pushed over the tag fail', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ours = await keyPair(dir, 'ours');
  const other = await keyPair(dir, 'other');
  const signing = loadSigningKey(ours.key, undefined);
  if (typeof signing === 'string') return t.fail(signing);
  const s = await scenario(t, 'signing', {}, signing);
  const { built, reused, builtLog } = await buildThenReuse(t, s);
  t.regex(builtLog, /# signed sha256:/);
  for (const res of [built, reused]) {
    const ref = `${REGISTRY}/${s.name}@${String(res.body.digest)}`;
    const verified = await cosignVerify(ours.pub, ref);
    t.is(verified.exitCode, 0, `${ref}: ${verified.stderr}`);
    t.not((await cosignVerify(other.pub, ref)).exitCode, 0, 'a signature of another key is refused');
  }
  // Signing again keeps one signature per key; another key's signature is added beside ours.
  const otherKey = loadSigningKey(other.key, undefined);
  if (typeof otherKey === 'string') return t.fail(otherKey);
  const client = new RegistryClient({ insecureRegistries: [REGISTRY] });
  t.teardown(() => client.close());
  const ref = parseImageString(`${REGISTRY}/${s.name}:x`, [REGISTRY])?.ref;
  if (ref === undefined) return t.fail('reference');
  const call = { ref, credentials: undefined, actions: PUSH_ACTIONS };
  const digest = String(built.body.digest);
  t.is(await new ImageSigner(signing).sign(client, call, digest), 'already signed');
  t.is(await new ImageSigner(otherKey).sign(client, call, digest), 'signed');
  for (const pub of [ours.pub, other.pub]) {
    t.is((await cosignVerify(pub, `${REGISTRY}/${s.name}@${digest}`)).exitCode, 0, 'both signatures verify');
  }
  // Someone pushes another image under the reused tag: the tag no longer verifies.
  const tag = String(reused.body.tag);
  await execa('skopeo', [
    'copy',
    '--all',
    '--src-tls-verify=false',
    '--dest-tls-verify=false',
    `docker://${stack.BASE_IMAGE_ANON}`,
    `docker://${REGISTRY}/${s.name}:${tag}`,
  ]);
  t.not((await manifest(s.name, tag)).digest, reused.body.digest, 'the tag names the other image');
  t.not((await cosignVerify(ours.pub, `${REGISTRY}/${s.name}:${tag}`)).exitCode, 0);
});

test('a canary signing key and its password appear nowhere', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const password = `canary-pass-${Date.now()}`;
  const pair = await keyPair(dir, 'canary', password);
  const signing = loadSigningKey(pair.key, password);
  if (typeof signing === 'string') return t.fail(signing);
  const app = await startBuildApp({ build: { reuse: true }, signing, redis: { url: stack.STACK_REDIS_URL } });
  t.teardown(app.close);
  const repo = await testRepo('canary-key');
  t.teardown(repo.dispose);
  await repo.commit(definition(' canary'));
  const body = {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: REGISTRY, name: uniqueName('canary') },
  };
  const argv = new Set<string>();
  const sampling = setInterval(() => {
    for (const pid of descendantPids()) argv.add(cmdlineOf(pid));
  }, 20);
  const res = await postBuild(app, body);
  clearInterval(sampling);
  t.is(res.status, 200, JSON.stringify(res.body));
  const keyBody = pair.pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  const haystacks: Record<string, string> = {
    'service log': app.logText(),
    'img log': (await fetchLog(app, res.body.imageBuildLogId)).text,
    'git log': (await fetchLog(app, res.body.gitCloneLogId)).text,
    '/config': await (await fetch(`${app.url}/config`)).text(),
    '/metrics': await (await fetch(`${app.url}/metrics`)).text(),
    '/builds': await (await fetch(`${app.url}/builds`)).text(),
    redis: await dumpRedis(stack.STACK_REDIS_URL),
    argv: [...argv].join('\n'),
  };
  t.true(argv.size > 0);
  for (const [where, text] of Object.entries(haystacks)) {
    t.false(text.includes(password), `password in ${where}`);
    for (const line of keyBody) t.false(text.includes(line), `key material in ${where}`);
  }
  t.true(haystacks['/config']?.includes(signing.fingerprint), '/config names the public fingerprint');
});
