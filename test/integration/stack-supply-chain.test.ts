// The stack's supply-chain parts: SBOM_GENERATOR_IMAGE follows BuildKit's SBOM scanner protocol, so
// `buildx build --attest type=sbom,generator=...` through the stack's builder pushes an SPDX
// attestation; COSIGN_BIN (trixie's cosign) signs and verifies by digest on the local registry.
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toolEnv } from '../helpers/tool-env.js';
import { stackEnv } from '../stack/env.js';
import { run } from '../stack/proc.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';

const env = stackEnv();

type Teardown = { teardown(fn: () => void): void };

interface Descriptor {
  digest: string;
  platform?: { architecture: string };
  annotations?: Record<string, string>;
}

function tmp(t: Teardown, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function getJson<T>(repo: string, ref: string, kind: 'manifests' | 'blobs'): Promise<T> {
  const res = await registryFetch(env.REGISTRY_ANON, `/v2/${repo}/${kind}/${ref}`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  if (res.status !== 200) throw new Error(`${kind} ${repo}:${ref}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Builds a one-RUN image on the base through a remote builder on STACK_BUILDER_ENDPOINT and pushes it. */
async function buildAndPush(t: Teardown, repo: string, extra: string[]): Promise<string> {
  const context = tmp(t, 'ibs-supply-ctx-');
  fs.writeFileSync(
    path.join(context, 'Dockerfile'),
    `FROM ${env.BASE_IMAGE_ANON}\nRUN echo sbom > /marker\n`,
  );
  const benv = toolEnv(tmp(t, 'ibs-supply-home-'), { DOCKER_CONFIG: tmp(t, 'ibs-supply-docker-') });
  const name = `supply-${crypto.randomBytes(4).toString('hex')}`;
  await run(
    'docker',
    ['buildx', 'create', '--name', name, '--driver', 'remote', env.STACK_BUILDER_ENDPOINT],
    {
      env: benv,
    },
  );
  const image = `${env.REGISTRY_ANON}/${repo}:1`;
  await run('docker', ['buildx', 'build', '--builder', name, '--push', '-t', image, ...extra, context], {
    env: benv,
    timeoutMs: 180_000,
  });
  const head = await registryFetch(env.REGISTRY_ANON, `/v2/${repo}/manifests/1`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
  });
  return head.headers.get('docker-content-digest') ?? '';
}

test('--attest type=sbom with SBOM_GENERATOR_IMAGE pushes an SPDX attestation for the image', async (t) => {
  const repo = `stacktest/sbom-${crypto.randomBytes(4).toString('hex')}`;
  await buildAndPush(t, repo, ['--attest', `type=sbom,generator=${env.SBOM_GENERATOR_IMAGE}`]);
  const index = await getJson<{ manifests: Descriptor[] }>(repo, '1', 'manifests');
  const image = index.manifests.find((m) => m.platform?.architecture === 'amd64');
  const attestation = index.manifests.find(
    (m) => m.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest',
  );
  t.truthy(image);
  t.is(attestation?.annotations?.['vnd.docker.reference.digest'], image?.digest);
  const layers = (await getJson<{ layers: Descriptor[] }>(repo, attestation!.digest, 'manifests')).layers;
  const types = layers.map((l) => l.annotations?.['in-toto.io/predicate-type']);
  t.true(types.includes('https://spdx.dev/Document'), JSON.stringify(types));
  t.true(
    types.some((p) => p?.startsWith('https://slsa.dev/provenance/')),
    'provenance stays beside it',
  );

  const spdx = layers.find(
    (l) => l.annotations?.['in-toto.io/predicate-type'] === 'https://spdx.dev/Document',
  )!;
  const statement = await getJson<{
    predicateType: string;
    subject: Array<{ digest: { sha256: string } }>;
    predicate: {
      spdxVersion: string;
      creationInfo: { creators: string[] };
      packages: Array<{ versionInfo: string }>;
    };
  }>(repo, spdx.digest, 'blobs');
  t.is(statement.predicateType, 'https://spdx.dev/Document');
  t.is(`sha256:${statement.subject[0]?.digest.sha256}`, image!.digest);
  t.is(statement.predicate.spdxVersion, 'SPDX-2.3');
  t.true(statement.predicate.creationInfo.creators.includes('Tool: ibs-stack-sbom-generator-1'));
  // The generator really scanned the image's rootfs: busybox, /etc/passwd, /etc/group, /marker.
  const files = Number(/^(\d+) files$/.exec(statement.predicate.packages[0]?.versionInfo ?? '')?.[1]);
  t.true(files >= 4, statement.predicate.packages[0]?.versionInfo);
});

test('COSIGN_BIN signs an image by digest on the local registry and verifies it with the key, not another', async (t) => {
  const repo = `stacktest/cosign-${crypto.randomBytes(4).toString('hex')}`;
  const digest = await buildAndPush(t, repo, []);
  t.regex(digest, /^sha256:[0-9a-f]{64}$/);
  const home = tmp(t, 'ibs-cosign-');
  const cenv = toolEnv(home, { DOCKER_CONFIG: home, COSIGN_PASSWORD: '' });
  const keys = (dir: string) => run(env.COSIGN_BIN, ['generate-key-pair'], { cwd: dir, env: cenv });
  fs.mkdirSync(path.join(home, 'other'));
  await keys(home);
  await keys(path.join(home, 'other'));
  const ref = `${env.REGISTRY_ANON}/${repo}@${digest}`;
  await run(
    env.COSIGN_BIN,
    ['sign', '--key', 'cosign.key', '--tlog-upload=false', '--allow-insecure-registry', '--yes', ref],
    { cwd: home, env: cenv },
  );
  const verify = (pub: string) =>
    run(
      env.COSIGN_BIN,
      ['verify', '--key', pub, '--insecure-ignore-tlog=true', '--allow-insecure-registry=true', ref],
      { cwd: home, env: cenv },
    );
  const ok = await verify('cosign.pub');
  const payload = JSON.parse(ok.stdout) as Array<{
    critical: { image: { 'docker-manifest-digest': string } };
  }>;
  t.is(payload[0]?.critical.image['docker-manifest-digest'], digest);
  const wrong = await verify('other/cosign.pub').catch((err: Error) => err);
  t.true(wrong instanceof Error);
  t.regex(String(wrong), /no matching signatures|invalid signature/i);
});
