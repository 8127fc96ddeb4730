// GET/DELETE /image against the stack's real registries (anonymous, deletion disabled, Basic,
// Bearer token) with images pushed by the real builder.
import test from 'ava';
import type { Config } from '../../src/config/types.js';
import { type RunningApp, startApp } from '../helpers/app.js';
import { stackEnv } from '../stack/env.js';
import { countingProxy } from '../helpers/registry-counting-proxy.js';
import { fixtureBuilder, runId, type FixtureBuilder } from '../helpers/registry-images.js';
import { metricValue } from '../helpers/metrics.js';

const env = stackEnv();
const REGISTRIES = [env.REGISTRY_ANON, env.REGISTRY_NODELETE, env.REGISTRY_BASIC, env.REGISTRY_TOKEN];
const TAG = runId();
/** Deletion targets: another image (its own digest), under two tags sharing it. */
const DEL_TAG = `${TAG}-del`;
const DEL_ALIAS = `${TAG}-del-alias`;
const NAME = 'dev/registry-it';
let builder: FixtureBuilder;

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const basicHeaders = {
  'x-registry-username': env.REGISTRY_BASIC_USER,
  'x-registry-password': env.REGISTRY_BASIC_PASSWORD,
};
const tokenHeaders = {
  'x-registry-username': env.REGISTRY_TOKEN_USER,
  'x-registry-password': env.REGISTRY_TOKEN_PASSWORD,
};
const ambientAuth: Config['registryAuth'] = {
  auths: {
    [`http://${env.REGISTRY_BASIC}`]: {
      auth: b64(`${env.REGISTRY_BASIC_USER}:${env.REGISTRY_BASIC_PASSWORD}`),
    },
    [env.REGISTRY_TOKEN]: { username: env.REGISTRY_TOKEN_USER, password: env.REGISTRY_TOKEN_PASSWORD },
  },
};

test.before(async () => {
  builder = await fixtureBuilder(env);
  // single-platform images under fresh tags in every registry: one kept, one to delete
  await builder.build({
    dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nLABEL org.example.fixture="registry-image ${TAG}"\n`,
    platforms: ['linux/amd64'],
    tags: REGISTRIES.map((r) => `${r}/${NAME}:${TAG}`),
  });
  await builder.build({
    dockerfile: `FROM ${env.BASE_IMAGE_ANON}\nLABEL org.example.fixture="registry-delete ${TAG}"\n`,
    platforms: ['linux/amd64'],
    tags: REGISTRIES.flatMap((r) => [`${r}/${NAME}:${DEL_TAG}`, `${r}/${NAME}:${DEL_ALIAS}`]),
  });
});

test.after.always(async () => {
  await builder?.dispose();
});

const app = (overrides: Partial<Config> = {}): Promise<RunningApp> =>
  startApp({ insecureRegistries: REGISTRIES, ...overrides });

const query = (registry: string, name: string, tag: string): string =>
  `registry=${encodeURIComponent(registry)}&name=${encodeURIComponent(name)}&tag=${encodeURIComponent(tag)}`;

async function check(
  a: RunningApp,
  registry: string,
  name: string,
  tag: string,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${a.url}/image?${query(registry, name, tag)}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const metric = (a: RunningApp, name: string, result: string): Promise<number> =>
  metricValue(a.url, name, { result });

test('exists and absent on every registry (header credentials where needed)', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const cases: [string, Record<string, string>][] = [
    [env.REGISTRY_ANON, {}],
    [env.REGISTRY_NODELETE, {}],
    [env.REGISTRY_BASIC, basicHeaders],
    [env.REGISTRY_TOKEN, tokenHeaders],
  ];
  for (const [registry, headers] of cases) {
    const images: [string, string][] = [
      ['dev/base', '1'],
      [NAME, TAG],
    ];
    for (const [name, tag] of images) {
      const found = await check(a, registry, name, tag, headers);
      t.deepEqual(
        found,
        { status: 200, body: { image: `${registry}/${name}:${tag}`, exists: true } },
        registry,
      );
    }
    const missingTag = await check(a, registry, 'dev/base', 'no-such-tag', headers);
    t.deepEqual(missingTag.body, { image: `${registry}/dev/base:no-such-tag`, exists: false }, registry);
    const missingRepo = await check(a, registry, 'dev/no-such-repo', '1', headers);
    t.deepEqual(missingRepo.body, { image: `${registry}/dev/no-such-repo:1`, exists: false }, registry);
  }
  t.is(await metric(a, 'service_image_checks_total', 'exists'), 8);
  t.is(await metric(a, 'service_image_checks_total', 'absent'), 8);
  t.is(await metric(a, 'service_image_checks_total', 'error'), 0);
});

test('Basic and Bearer registries with ambient auth (docker config keys with a scheme or bare)', async (t) => {
  const a = await app({ registryAuth: ambientAuth });
  t.teardown(a.close);
  for (const registry of [env.REGISTRY_BASIC, env.REGISTRY_TOKEN]) {
    t.deepEqual((await check(a, registry, 'dev/base', '1')).body, {
      image: `${registry}/dev/base:1`,
      exists: true,
    });
    t.deepEqual((await check(a, registry, 'dev/base', 'nope')).body, {
      image: `${registry}/dev/base:nope`,
      exists: false,
    });
  }
  // header credentials win over ambient auth
  const wrong = {
    'x-registry-username': env.REGISTRY_TOKEN_USER,
    'x-registry-password': 'wrong-password-42',
  };
  t.is((await check(a, env.REGISTRY_TOKEN, 'dev/base', '1', wrong)).status, 502);
});

test('no credentials or wrong ones -> 502 naming the registry and status, counted as error, no secret leaked', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const wrongBasic = {
    'x-registry-username': env.REGISTRY_BASIC_USER,
    'x-registry-password': 'wrong-password-42',
  };
  const wrongToken = {
    'x-registry-username': env.REGISTRY_TOKEN_USER,
    'x-registry-password': 'wrong-password-42',
  };
  const cases: [string, Record<string, string>][] = [
    [env.REGISTRY_BASIC, wrongBasic],
    [env.REGISTRY_TOKEN, wrongToken],
    [env.REGISTRY_BASIC, {}],
    [env.REGISTRY_TOKEN, {}],
  ];
  for (const [registry, headers] of cases) {
    const res = await check(a, registry, 'dev/base', '1', headers);
    t.is(res.status, 502, registry);
    t.deepEqual(res.body, { error: `${registry} answered 401 for ${registry}/dev/base:1` });
  }
  t.is(await metric(a, 'service_image_checks_total', 'error'), 4);
  t.false(a.logText().includes('wrong-password-42'));
  const metrics = await (await fetch(`${a.url}/metrics`)).text();
  t.false(metrics.includes('wrong-password-42'));
});

test('a warm check on the token registry is one registry round trip (token reused)', async (t) => {
  const proxy = await countingProxy(env.REGISTRY_TOKEN);
  const a = await app({ insecureRegistries: [proxy.host] });
  t.teardown(async () => {
    await a.close();
    await proxy.close();
  });
  t.is((await check(a, proxy.host, 'dev/base', '1', tokenHeaders)).status, 200);
  // cold: HEAD -> 401 challenge, token from the realm (not through the proxy), HEAD again
  t.deepEqual(proxy.requests, ['HEAD /v2/dev/base/manifests/1', 'HEAD /v2/dev/base/manifests/1']);
  proxy.reset();
  for (let i = 0; i < 5; i++) t.is((await check(a, proxy.host, 'dev/base', '1', tokenHeaders)).status, 200);
  t.is(proxy.requests.length, 5);
  t.is(proxy.connections(), 0); // kept-alive connection reused
});

test('DELETE on the deletion-enabled registry deletes by digest, names the tags sharing it; then absent', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const url = `${a.url}/image?${query(env.REGISTRY_ANON, NAME, DEL_TAG)}`;
  const image = `${env.REGISTRY_ANON}/${NAME}:${DEL_TAG}`;
  let res = await fetch(url, { method: 'DELETE' });
  t.is(res.status, 200);
  const body = (await res.json()) as { image: string; deleted: boolean; reason: string };
  t.is(body.image, image);
  t.true(body.deleted);
  t.regex(body.reason, /sha256:[0-9a-f]{64}/);
  t.true(body.reason.includes(`shared by other tags (${DEL_ALIAS})`), body.reason);
  t.deepEqual((await check(a, env.REGISTRY_ANON, NAME, DEL_TAG)).body, { image, exists: false });
  t.false((await check(a, env.REGISTRY_ANON, NAME, DEL_ALIAS)).body.exists as boolean);
  res = await fetch(url, { method: 'DELETE' });
  t.deepEqual(await res.json(), { image, deleted: true, reason: 'already absent' });
  t.is(await metric(a, 'service_image_deletes_total', 'deleted'), 2);
  // other images of the repository are untouched
  t.true((await check(a, env.REGISTRY_ANON, NAME, TAG)).body.exists as boolean);
});

test('DELETE on the token registry with header credentials gets a delete-scoped token and deletes', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const image = `${env.REGISTRY_TOKEN}/${NAME}:${DEL_TAG}`;
  const res = await fetch(`${a.url}/image?${query(env.REGISTRY_TOKEN, NAME, DEL_TAG)}`, {
    method: 'DELETE',
    headers: tokenHeaders,
  });
  t.is(res.status, 200);
  const body = (await res.json()) as { deleted: boolean };
  t.true(body.deleted);
  t.deepEqual((await check(a, env.REGISTRY_TOKEN, NAME, DEL_TAG, tokenHeaders)).body, {
    image,
    exists: false,
  });
});

test('DELETE with wrong credentials is an error (502), not a deletion', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const wrong = {
    'x-registry-username': env.REGISTRY_BASIC_USER,
    'x-registry-password': 'wrong-password-42',
  };
  const res = await fetch(`${a.url}/image?${query(env.REGISTRY_BASIC, NAME, DEL_TAG)}`, {
    method: 'DELETE',
    headers: wrong,
  });
  t.is(res.status, 502);
  t.deepEqual(await res.json(), {
    error: `${env.REGISTRY_BASIC} answered 401 for ${env.REGISTRY_BASIC}/${NAME}:${DEL_TAG}`,
  });
  t.true((await check(a, env.REGISTRY_BASIC, NAME, DEL_TAG, basicHeaders)).body.exists as boolean);
  t.is(await metric(a, 'service_image_deletes_total', 'error'), 1);
});

test('DELETE on the registry with deletion disabled is unsupported, and the image stays', async (t) => {
  const a = await app();
  t.teardown(a.close);
  const image = `${env.REGISTRY_NODELETE}/${NAME}:${DEL_TAG}`;
  const res = await fetch(`${a.url}/image?${query(env.REGISTRY_NODELETE, NAME, DEL_TAG)}`, {
    method: 'DELETE',
  });
  t.is(res.status, 200);
  const body = (await res.json()) as { image: string; deleted: boolean; reason: string };
  t.is(body.image, image);
  t.false(body.deleted);
  t.regex(body.reason, /does not support deleting manifests \(answered 405 UNSUPPORTED\)/);
  t.true((await check(a, env.REGISTRY_NODELETE, NAME, DEL_TAG)).body.exists as boolean);
  t.is(await metric(a, 'service_image_deletes_total', 'unsupported'), 1);
  t.is(await metric(a, 'service_image_deletes_total', 'error'), 0);
});
