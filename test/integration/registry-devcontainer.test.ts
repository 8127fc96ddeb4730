// GET /devcontainer against the stack's real registries, on images pushed by the real builder:
// a multi-platform index with attestation entries, an image without the label, a bad label.
import test from 'ava';
import type { Config } from '../../src/config/types.js';
import { type RunningApp, startApp } from '../helpers/app.js';
import { stackEnv } from '../stack/env.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import { countingProxy } from '../helpers/registry-counting-proxy.js';
import { fixtureBuilder, runId, type FixtureBuilder } from '../helpers/registry-images.js';
import { metricValue } from '../helpers/metrics.js';

const env = stackEnv();
const REGISTRIES = [env.REGISTRY_ANON, env.REGISTRY_TOKEN];
const TAG = runId();
const NAME = 'dev/devcontainer-it';
const NO_LABEL = `${TAG}-nolabel`;
const BAD_LABEL = `${TAG}-badlabel`;
let builder: FixtureBuilder;

const tokenHeaders = {
  'x-registry-username': env.REGISTRY_TOKEN_USER,
  'x-registry-password': env.REGISTRY_TOKEN_PASSWORD,
};

/** The label, per platform (TARGETARCH is substituted by the builder). */
const label = (arch: string): Record<string, unknown>[] => [
  { id: 'ghcr.io/devcontainers/features/common-utils:2', init: true, postCreateCommand: 'echo feature' },
  {
    remoteUser: 'vscode',
    containerEnv: { ARCH: arch },
    postCreateCommand: ['echo', "it's here"],
    customizations: { vscode: { extensions: ['ms-python.python'], settings: { 'editor.tabSize': 2 } } },
  },
];
const dockerLabel = (value: string): string => JSON.stringify(value).replace(/\$/g, '\\$');

test.before(async () => {
  builder = await fixtureBuilder(env);
  // the builder substitutes ${TARGETARCH} inside the double-quoted LABEL value
  const metadata = JSON.stringify(label('${TARGETARCH}'));
  await builder.build({
    dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nARG TARGETARCH\nLABEL devcontainer.metadata=${JSON.stringify(metadata)}\n`,
    platforms: ['linux/amd64', 'linux/386'],
    tags: REGISTRIES.map((r) => `${r}/${NAME}:${TAG}`),
  });
  await builder.build({
    dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nLABEL org.example.fixture=${dockerLabel(`no label ${TAG}`)}\n`,
    platforms: ['linux/amd64'],
    tags: [`${env.REGISTRY_ANON}/${NAME}:${NO_LABEL}`],
  });
  await builder.build({
    dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nLABEL devcontainer.metadata=${dockerLabel(`"just a string ${TAG}"`)}\n`,
    platforms: ['linux/amd64'],
    tags: [`${env.REGISTRY_ANON}/${NAME}:${BAD_LABEL}`],
  });
});

test.after.always(async () => {
  await builder?.dispose();
});

const app = (overrides: Partial<Config> = {}): Promise<RunningApp> =>
  startApp({ insecureRegistries: REGISTRIES, ...overrides });

async function lookup(
  a: RunningApp,
  registry: string,
  tag: string,
  platform?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const p = platform === undefined ? '' : `&platform=${encodeURIComponent(platform)}`;
  const res = await fetch(`${a.url}/devcontainer?registry=${registry}&name=${NAME}&tag=${tag}${p}`, {
    headers,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const metric = (a: RunningApp, result: string): Promise<number> =>
  metricValue(a.url, 'service_devcontainer_lookups_total', { result });

interface IndexEntry {
  digest: string;
  platform?: { os: string; architecture: string };
  annotations?: Record<string, string>;
}

/** The image index as the registry serves it, read without the service. */
async function rawIndex(): Promise<IndexEntry[]> {
  const res = await registryFetch(env.REGISTRY_ANON, `/v2/${NAME}/manifests/${TAG}`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  return ((await res.json()) as { manifests: IndexEntry[] }).manifests;
}

const digestFor = (index: IndexEntry[], arch: string): string | undefined =>
  index.find((m) => m.platform?.os === 'linux' && m.platform.architecture === arch)?.digest;

test('the default platform (linux/amd64) of a multi-platform index with attestations', async (t) => {
  const index = await rawIndex();
  t.true(
    index.some(
      (m) =>
        m.platform?.os === 'unknown' &&
        m.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest',
    ),
    'the builder pushed attestation entries',
  );
  const a = await app();
  t.teardown(a.close);
  const { status, body } = await lookup(a, env.REGISTRY_ANON, TAG);
  t.is(status, 200);
  t.is(body.image, `${env.REGISTRY_ANON}/${NAME}:${TAG}`);
  t.is(body.digest, digestFor(index, 'amd64'));
  t.deepEqual(body.metadata, label('amd64'));
  const configuration = body.configuration as Record<string, unknown>;
  t.is(configuration.remoteUser, 'vscode');
  t.true(configuration.init as boolean);
  t.deepEqual(configuration.containerEnv, { ARCH: 'amd64' });
  t.deepEqual(configuration.postCreateCommands, ['echo feature', ['echo', "it's here"]]);
  const scripts = body.lifecycleScripts as Record<string, string | null>;
  t.regex(scripts.postCreateCommand ?? '', /^#!\/bin\/sh\n/);
  t.is(scripts.onCreateCommand, null);
  t.deepEqual(body.vscode, { extensions: ['ms-python.python'], settings: { 'editor.tabSize': 2 } });
  t.true(Array.isArray(body.warnings));
  t.is(await metric(a, 'found'), 1);
});

test('the platform parameter picks the index entry, compared after normalising', async (t) => {
  const index = await rawIndex();
  const a = await app();
  t.teardown(a.close);
  const cases: [string, string][] = [
    ['linux/386', '386'],
    ['linux/amd64', 'amd64'],
    ['linux/x86_64', 'amd64'],
    ['linux/i386', '386'],
  ];
  for (const [platform, arch] of cases) {
    const { status, body } = await lookup(a, env.REGISTRY_ANON, TAG, platform);
    t.is(status, 200, platform);
    t.is(body.digest, digestFor(index, arch), platform);
    t.deepEqual((body.configuration as { containerEnv: unknown }).containerEnv, { ARCH: arch }, platform);
  }
});

test('a platform not in the index (attestations never match) -> 422 listing the available ones', async (t) => {
  const a = await app();
  t.teardown(a.close);
  for (const platform of ['linux/arm64', 'unknown/unknown', 'windows/amd64']) {
    const { status, body } = await lookup(a, env.REGISTRY_ANON, TAG, platform);
    t.is(status, 422, platform);
    t.regex(String(body.error), /linux\/amd64, linux\/386/, platform);
    t.false(String(body.error).includes('unknown/unknown, '), platform);
  }
  t.is(await metric(a, 'found'), 0);
});

test('no label or a label that is not a JSON array/object -> 422; unknown tag or repository -> 404', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const noLabel = await lookup(a, env.REGISTRY_ANON, NO_LABEL);
  t.is(noLabel.status, 422);
  t.regex(String(noLabel.body.error), /devcontainer\.metadata/);
  const bad = await lookup(a, env.REGISTRY_ANON, BAD_LABEL);
  t.is(bad.status, 422);
  t.regex(String(bad.body.error), /devcontainer\.metadata/);
  const unknownTag = await lookup(a, env.REGISTRY_ANON, `${TAG}-missing`);
  t.is(unknownTag.status, 404);
  t.is(typeof unknownTag.body.error, 'string');
  const res = await fetch(`${a.url}/devcontainer?registry=${env.REGISTRY_ANON}&name=dev/no-such-repo&tag=1`);
  t.is(res.status, 404);
  t.is(await metric(a, 'no_metadata'), 2);
  t.is(await metric(a, 'absent'), 2);
  t.is(await metric(a, 'error'), 0);
});

test('the token registry: header credentials read it; none -> 502 error', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const ok = await lookup(a, env.REGISTRY_TOKEN, TAG, 'linux/386', tokenHeaders);
  t.is(ok.status, 200);
  t.deepEqual((ok.body.configuration as { containerEnv: unknown }).containerEnv, { ARCH: '386' });
  const denied = await lookup(a, env.REGISTRY_TOKEN, TAG);
  t.is(denied.status, 502);
  t.deepEqual(denied.body, {
    error: `${env.REGISTRY_TOKEN} answered 401 for ${env.REGISTRY_TOKEN}/${NAME}:${TAG}`,
  });
  t.is(await metric(a, 'found'), 1);
  t.is(await metric(a, 'error'), 1);
});

test('a repeated lookup of an already-read digest is one registry round trip', async (t) => {
  const proxy = await countingProxy(env.REGISTRY_TOKEN);
  const a = await app({ insecureRegistries: [proxy.host] });
  t.teardown(async () => {
    await a.close();
    await proxy.close();
  });
  const cold = await lookup(a, proxy.host, TAG, undefined, tokenHeaders);
  t.is(cold.status, 200);
  t.true(proxy.requests.length >= 3, proxy.requests.join('\n'));
  proxy.reset();
  for (let i = 0; i < 3; i++) {
    const warm = await lookup(a, proxy.host, TAG, undefined, tokenHeaders);
    t.is(warm.status, 200);
    t.is(warm.body.digest, cold.body.digest);
  }
  t.deepEqual(proxy.requests, Array(3).fill(`GET /v2/${NAME}/manifests/${TAG}`));
});
