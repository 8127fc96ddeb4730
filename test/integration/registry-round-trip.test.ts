// The seam between POST /build and the registry endpoints, against the stack's real registries:
// every triple POST /build answers is accepted as is by GET /image, GET /devcontainer and
// DELETE /image, with and without a namespace path on the registry, whether the registry came
// from the request or from a registry mapping rule, with ambient or per-request credentials
// (both matched by the registry's host).
import test, { type ExecutionContext } from 'ava';
import { encodeBasicAuth } from '../../src/secrets/basic-auth.js';
import type { RunningApp } from '../helpers/app.js';
import {
  type BuildOverrides,
  fetchLog,
  httpsCreds,
  httpsRepo,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';

interface Case {
  title: string;
  overrides: BuildOverrides;
  /** `image` and `registryCredentials` of the request. */
  request: Record<string, unknown>;
  /** The registry POST /build is expected to answer. */
  registry: string;
  /** X-Registry-* headers for the registry endpoints (else ambient auth or anonymous). */
  headers?: Record<string, string>;
}

const basicAmbient = {
  registryAuth: {
    auths: {
      [stack.REGISTRY_BASIC]: {
        auth: encodeBasicAuth(stack.REGISTRY_BASIC_USER, stack.REGISTRY_BASIC_PASSWORD),
      },
    },
  },
};

const CASES: Case[] = [
  {
    title: 'registry from the request, no namespace',
    overrides: {},
    request: { image: { registry: stack.REGISTRY_ANON, name: uniqueName('rt-plain') } },
    registry: stack.REGISTRY_ANON,
  },
  {
    title: 'registry from the request with a namespace path',
    overrides: {},
    request: { image: { registry: `${stack.REGISTRY_ANON}/team`, name: uniqueName('rt-ns') } },
    registry: `${stack.REGISTRY_ANON}/team`,
  },
  {
    title: 'registry from a mapping rule with a namespace path, ambient Basic auth found by host',
    overrides: { ...basicAmbient, registryMappingRules: [{ registry: `${stack.REGISTRY_BASIC}/team/sub` }] },
    request: { image: { name: uniqueName('rt-map') } },
    registry: `${stack.REGISTRY_BASIC}/team/sub`,
  },
  {
    title: 'token registry with a namespace path and per-request credentials',
    overrides: {},
    request: {
      image: { registry: `${stack.REGISTRY_TOKEN}/org`, name: uniqueName('rt-token') },
      registryCredentials: {
        registry: `${stack.REGISTRY_TOKEN}/org`,
        username: stack.REGISTRY_TOKEN_USER,
        password: stack.REGISTRY_TOKEN_PASSWORD,
      },
    },
    registry: `${stack.REGISTRY_TOKEN}/org`,
    headers: {
      'x-registry-username': stack.REGISTRY_TOKEN_USER,
      'x-registry-password': stack.REGISTRY_TOKEN_PASSWORD,
    },
  },
];

const apps: RunningApp[] = [];
test.after.always(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

async function call(
  app: RunningApp,
  method: 'GET' | 'DELETE',
  path: string,
  triple: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const query = new URLSearchParams(triple).toString();
  const res = await fetch(`${app.url}${path}?${query}`, { method, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function roundTrip(t: ExecutionContext, c: Case): Promise<void> {
  const app = await startBuildApp(c.overrides);
  apps.push(app);
  const res = await postBuild(app, {
    repository: httpsRepo('feature'),
    gitCredentials: httpsCreds(),
    ...c.request,
  });
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.imageBuildLogId ?? res.body.logId);
    t.fail(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
    return;
  }
  t.is(res.body.registry, c.registry);
  const triple = {
    registry: String(res.body.registry),
    name: String(res.body.name),
    tag: String(res.body.tag),
  };

  const check = await call(app, 'GET', '/image', triple, c.headers);
  t.is(check.status, 200, JSON.stringify(check.body));
  t.deepEqual(check.body, { image: res.body.image, exists: true });

  const devcontainer = await call(app, 'GET', '/devcontainer', triple, c.headers);
  t.is(devcontainer.status, 200, JSON.stringify(devcontainer.body));
  t.is(devcontainer.body.image, res.body.image);
  t.regex(String(devcontainer.body.digest), /^sha256:[0-9a-f]{64}$/);

  const deleted = await call(app, 'DELETE', '/image', triple, c.headers);
  t.is(deleted.status, 200, JSON.stringify(deleted.body));
  t.like(deleted.body, { image: res.body.image, deleted: true });

  const gone = await call(app, 'GET', '/image', triple, c.headers);
  t.deepEqual(gone.body, { image: res.body.image, exists: false });
}

for (const c of CASES) {
  test(`round trip: ${c.title}`, (t) => roundTrip(t, c));
}
