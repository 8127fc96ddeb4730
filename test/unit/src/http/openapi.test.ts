// docs/openapi.yaml is a valid OpenAPI 3.1 document, documents exactly the routes the app serves,
// names only real error codes, and the running app answers representative requests (successes
// and errors) with the statuses, headers and bodies it documents.
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { createApp } from '../../../../src/http/app.js';
import { serviceError, ERRORS } from '../../../../src/errors/errors.js';
import type { BuildDeps } from '../../../../workers/job/build-deps.js';
import type { BuildPlan, BuildResult } from '../../../../workers/plan/plan-types.js';
import { startApp, testConfig } from '../../../helpers/app.js';
import {
  documentErrors,
  HTTP_METHODS,
  loadOpenApi,
  resolve,
  schemaValidator,
  type Operation,
  type Response,
} from '../../../helpers/openapi.js';
import { fakeServer, json, type FakeServer } from '../../../helpers/fake-registry.js';
import { eventually } from '../../../helpers/eventually.js';
import { parseMetrics } from '../../../helpers/metrics.js';
import { silentEndpoint } from '../../../helpers/silent-endpoint.js';

const doc = loadOpenApi();
const compile = schemaValidator(doc);

test('docs/openapi.yaml is a valid OpenAPI 3.1 document (official schema)', (t) => {
  t.deepEqual(documentErrors(doc), []);
  const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, unknown>> };
  (broken.paths['/build'] ?? {}).post = { responses: { '200': { content: {} } } };
  t.true(documentErrors(broken).length > 0, 'a response without a description is refused');
});

/** `METHOD /path/{param}` of every operation of the document. */
function documentedRoutes(): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** People's sign-in configured, so its /auth/ routes are served (a provider that does not answer). */
const WITH_SIGN_IN = {
  auth: {
    mode: 'enforce' as const,
    issuers: [{ name: 'people', issuer: 'https://127.0.0.1:1', audience: 'ibs' }],
    tokens: [],
    rules: [],
    browser: {
      issuer: 'people',
      clientId: 'ibs-pages',
      scopes: ['openid'],
      redirectUrl: 'http://127.0.0.1:1/auth/callback',
      sessionHours: 8,
    },
  },
};

test('every route the app serves is documented, and every documented route is served', async (t) => {
  const app = await startApp(WITH_SIGN_IN);
  t.teardown(app.close);
  const served = createApp(app.ctx)
    .middleware.map((mw) => (mw as { router?: Router }).router)
    .filter((r): r is Router => r !== undefined)
    .flatMap((router) => router.stack)
    .flatMap((layer) =>
      layer.methods
        .filter((m) => m !== 'HEAD') // implied by GET
        .map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
    );
  t.true(served.length > 0);
  t.deepEqual([...served].sort(), documentedRoutes().sort());
  // The description promises HEAD wherever GET is served.
  for (const route of documentedRoutes().filter((r) => r.startsWith('GET ') && !r.includes('{'))) {
    const path = route.slice('GET '.length);
    const [get, head] = await Promise.all([fetch(app.url + path), fetch(app.url + path, { method: 'HEAD' })]);
    t.is(head.status, get.status, `HEAD ${path}`);
  }
});

function operations(): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => m in item).map((m): [string, Operation] => [
      `${m.toUpperCase()} ${path}`,
      (item as Record<string, Operation>)[m] as Operation,
    ]),
  );
}

test('the document names only real error codes, each under its status, and every code somewhere', (t) => {
  const named = new Set<string>();
  for (const [route, op] of operations()) {
    for (const [status, ref] of Object.entries(op.responses)) {
      const response = resolve<Response>(doc, ref);
      for (const code of response['x-error-codes'] ?? []) {
        named.add(code);
        const entry = (ERRORS as Record<string, { status: number }>)[code];
        t.truthy(entry, `${route} ${status}: unknown code ${code}`);
        t.is(String(entry?.status), status, `${route}: ${code} is not a ${status}`);
      }
      if (Number(status) >= 400) t.truthy(response['x-error-codes'] ?? response.description, route);
    }
  }
  // NOT_FOUND answers the routes that do not exist: the document's description says so.
  const missing = Object.keys(ERRORS).filter((code) => code !== 'NOT_FOUND' && !named.has(code));
  t.deepEqual(missing, []);
});

/** Checks one answer against the document: documented status, content type, headers and body. */
async function conforms(
  t: ExecutionContext,
  route: string,
  res: globalThis.Response,
  expectedStatus: number,
): Promise<unknown> {
  const [method = '', path = ''] = route.split(' ');
  const op = (doc.paths[path] as Record<string, Operation> | undefined)?.[method.toLowerCase()];
  const label = `${route} -> ${res.status}`;
  t.is(res.status, expectedStatus, label);
  if (!op) return t.fail(`${route} is not documented`);
  const documented = op.responses[String(res.status)];
  if (!documented) return t.fail(`${label} is not documented`);
  const response = resolve<Response>(doc, documented);
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const h = resolve<{ required?: boolean; schema?: unknown }>(doc, header);
    const value = res.headers.get(name);
    if (h.required) t.not(value, null, `${label}: header ${name}`);
    if (value !== null && h.schema) t.true(compile(h.schema)(value), `${label}: header ${name}=${value}`);
  }
  const text = await res.text();
  const mediaTypes = Object.keys(response.content ?? {});
  if (mediaTypes.length === 0) {
    t.is(text, '', `${label}: no body documented`);
    return undefined;
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  t.true(mediaTypes.includes(type), `${label}: content type ${type} not in ${mediaTypes.join(', ')}`);
  const body: unknown = type === 'application/json' ? JSON.parse(text) : text;
  const validate = compile(response.content?.[type]?.schema);
  t.true(validate(body), `${label}: ${JSON.stringify(validate.errors)} for ${text.slice(0, 300)}`);
  return body;
}

const RESULT_COMMIT = '0123456789abcdef0123456789abcdef01234567';

/** A build runner standing in for clone + build: ok, failing with a real log, or held until released. */
function fakeRunner(holds: (() => void)[]) {
  return async (plan: BuildPlan, deps: BuildDeps): Promise<BuildResult> => {
    if (plan.repository.endsWith('/slow.git')) await new Promise<void>((release) => holds.push(release));
    if (plan.repository.endsWith('/fail.git')) {
      const log = await deps.logStore.open('git');
      log.write('fatal: repository not found\n');
      await log.close();
      throw serviceError(
        'COMMAND_FAILED',
        { command: `git clone -- ${plan.repository} /tmp/x`, outcome: 'exited with code 128' },
        { logId: log.id },
      );
    }
    const { registry, name } = plan.image;
    return {
      image: `${registry}/${name}:sha-0123456`,
      registry,
      name,
      tag: 'sha-0123456',
      branch: 'main',
      commit: RESULT_COMMIT,
      gitCloneLogId: 'git-00000000-0000-4000-8000-000000000000',
      imageBuildLogId: 'img-00000000-0000-4000-8000-000000000000',
      digest: `sha256:${'d'.repeat(64)}`,
    };
  };
}

const post = (url: string, body: unknown, raw?: string): Promise<globalThis.Response> =>
  fetch(`${url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });

test('POST /build and /logs/{id} answer as documented', async (t) => {
  const holds: (() => void)[] = [];
  const scratch = testConfig({ scratchDir: '/nonexistent' });
  const app = await startApp(
    { build: { ...scratch.build, maxConcurrent: 1 } },
    { app: { build: { runJob: fakeRunner(holds) } } },
  );
  t.teardown(app.close);
  const repo = (name: string) => ({
    repository: `https://git.example.com/org/${name}.git`,
    image: { registry: 'registry.example.com' },
  });

  const ok = (await conforms(t, 'POST /build', await post(app.url, repo('app')), 200)) as BuildResult;
  t.is(ok.commit, RESULT_COMMIT);
  await conforms(t, 'POST /build', await post(app.url, undefined, '{"repository": '), 400);
  await conforms(t, 'POST /build', await post(app.url, { repository: 42 }), 400);
  await conforms(t, 'POST /build', await post(app.url, { repository: 'ftp://h/x', image: {} }), 400);
  await conforms(t, 'POST /build', await post(app.url, { repository: 'x'.repeat(2 * 1024 * 1024) }), 413);

  const failed = (await conforms(t, 'POST /build', await post(app.url, repo('fail')), 500)) as {
    logId: string;
  };
  const logUrl = `${app.url}/logs/${failed.logId}`;
  const logText = await conforms(t, 'GET /logs/{id}', await fetch(logUrl), 200);
  t.true(String(logText).includes('repository not found'));
  await conforms(t, 'DELETE /logs/{id}', await fetch(logUrl, { method: 'DELETE' }), 204);
  const gone = (await conforms(t, 'GET /logs/{id}', await fetch(logUrl), 404)) as { logId?: string };
  t.is(gone.logId, failed.logId);
  await conforms(t, 'DELETE /logs/{id}', await fetch(logUrl, { method: 'DELETE' }), 404);
  await conforms(t, 'GET /logs/{id}', await fetch(`${app.url}/logs/not-a-log-id`), 400);
  await conforms(t, 'DELETE /logs/{id}', await fetch(`${app.url}/logs/..%2Fx`, { method: 'DELETE' }), 400);

  const slow = post(app.url, repo('slow'));
  await eventually(() => holds.length > 0, { what: 'the slow build to hold its slot' });
  const busy = await post(app.url, repo('app'));
  await conforms(t, 'POST /build', busy, 429);
  const listed = (await conforms(t, 'GET /builds', await fetch(`${app.url}/builds`), 200)) as {
    builds: { phase: string }[];
  };
  t.deepEqual(
    listed.builds.map((b) => b.phase),
    ['cloning', 'finished', 'finished'],
  );
  await conforms(t, 'GET /builds', await fetch(`${app.url}/builds?status=done`), 400);
  holds.forEach((release) => release());
  await conforms(t, 'POST /build', await slow, 200);
  await conforms(t, 'GET /builds', await fetch(`${app.url}/builds?status=success`), 200);
  await conforms(t, 'GET /logs/{id}', await fetch(`${logUrl}?follow=maybe`), 400);
  await conforms(t, 'GET /logs/{id}', await fetch(`${logUrl}?follow=true`), 404);
});

test('probes, metrics and the configuration view answer as documented', async (t) => {
  const notReady = await startApp();
  t.teardown(notReady.close);
  await conforms(t, 'GET /health/ready', await fetch(`${notReady.url}/health/ready`), 503);

  const app = await startApp({
    builderEndpoints: [await silentEndpoint(t)],
    insecureRegistries: ['localhost:5000'],
    gitCredentials: [{ host: 'git.example.com', kind: 'https', username: 'u', token: 'secret-token' }],
  });
  t.teardown(app.close);
  await conforms(t, 'GET /health/startup', await fetch(`${app.url}/health/startup`), 200);
  await conforms(t, 'GET /health/live', await fetch(`${app.url}/health/live`), 200);
  await conforms(t, 'GET /health/ready', await fetch(`${app.url}/health/ready`), 200);
  const metrics = await conforms(t, 'GET /metrics', await fetch(`${app.url}/metrics`), 200);
  t.is(parseMetrics(String(metrics)).types.get('service_builds_total'), 'counter');
  const view = await conforms(t, 'GET /config', await fetch(`${app.url}/config`), 200);
  t.false(JSON.stringify(view).includes('secret-token'));
});

const digestOf = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;

/** A registry with `dev/app:1` (labelled), `dev/plain:1` (no label), `dev/broken` (500s) and nothing else. */
async function labelledRegistry(): Promise<FakeServer> {
  const config = (labels: Record<string, string>) =>
    JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Labels: labels } });
  const configs = new Map<string, string>();
  const manifests = new Map<string, string>();
  for (const [name, labels] of [
    ['dev/app', { 'devcontainer.metadata': '[{"remoteUser":"dev","postCreateCommand":"make"}]' }],
    ['dev/plain', {}],
  ] as const) {
    const body = config(labels);
    configs.set(digestOf(body), body);
    manifests.set(
      name,
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: {
          mediaType: 'application/vnd.oci.image.config.v1+json',
          digest: digestOf(body),
          size: body.length,
        },
        layers: [],
      }),
    );
  }
  return fakeServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/v2/dev/broken/')) return json(res, 500, { errors: [{ code: 'UNKNOWN' }] });
    const blob = /^\/v2\/dev\/\w+\/blobs\/(.+)$/.exec(url);
    if (blob) {
      const body = configs.get(decodeURIComponent(blob[1] ?? ''));
      return body ? void res.writeHead(200).end(body) : void res.writeHead(404).end();
    }
    if (url.endsWith('/tags/list')) return json(res, 200, { tags: ['1'] });
    const m = /^\/v2\/(dev\/\w+)\/manifests\/(.+)$/.exec(url);
    const manifest = m ? manifests.get(m[1] ?? '') : undefined;
    if (!manifest) return void res.writeHead(404).end();
    const digest = digestOf(manifest);
    if (req.method === 'DELETE') return void res.writeHead(202).end();
    const headers = {
      'content-type': 'application/vnd.oci.image.manifest.v1+json',
      'docker-content-digest': digest,
    };
    return void res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : manifest);
  });
}

test('GET/DELETE /image and GET /devcontainer answer as documented', async (t) => {
  const registry = await labelledRegistry();
  const app = await startApp({ insecureRegistries: [registry.host] });
  t.teardown(async () => {
    await app.close();
    await registry.close();
  });
  const q = (name: string, extra = '') => `?registry=${registry.host}&name=${name}&tag=1${extra}`;
  const image = (name: string, init?: RequestInit) => fetch(`${app.url}/image${q(name)}`, init);
  const devcontainer = (name: string, extra = '') => fetch(`${app.url}/devcontainer${q(name, extra)}`);

  t.like(await conforms(t, 'GET /image', await image('dev/app'), 200), { exists: true });
  t.like(await conforms(t, 'GET /image', await image('dev/none'), 200), { exists: false });
  await conforms(t, 'GET /image', await fetch(`${app.url}/image?registry=${registry.host}`), 400);
  await conforms(t, 'GET /image', await image('dev/app', { headers: { 'x-registry-username': 'u' } }), 400);
  await conforms(t, 'GET /image', await image('dev/broken'), 502);

  t.like(await conforms(t, 'DELETE /image', await image('dev/app', { method: 'DELETE' }), 200), {
    deleted: true,
  });
  await conforms(t, 'DELETE /image', await image('Dev/App', { method: 'DELETE' }), 400);
  await conforms(t, 'DELETE /image', await image('dev/broken', { method: 'DELETE' }), 502);

  const view = await conforms(t, 'GET /devcontainer', await devcontainer('dev/app'), 200);
  t.like(view, { configuration: { remoteUser: 'dev' } });
  await conforms(t, 'GET /devcontainer', await devcontainer('dev/none'), 404);
  await conforms(t, 'GET /devcontainer', await devcontainer('dev/plain'), 422);
  const wrong = await conforms(
    t,
    'GET /devcontainer',
    await devcontainer('dev/app', '&platform=linux/arm64'),
    422,
  );
  t.like(wrong, { availablePlatforms: ['linux/amd64'] });
  await conforms(t, 'GET /devcontainer', await devcontainer('dev/app', '&platform=linux'), 400);
  await conforms(t, 'GET /devcontainer', await devcontainer('dev/broken'), 502);
});

test('GET /usage and /usage/budgets answer as documented', async (t) => {
  const scratch = testConfig({ scratchDir: '/nonexistent' });
  const app = await startApp(
    { build: { ...scratch.build, quotas: [{ tenant: 'org', monthlyBuildMinutes: 10 }] } },
    { app: { build: { runJob: fakeRunner([]) } } },
  );
  t.teardown(app.close);
  await conforms(
    t,
    'POST /build',
    await post(app.url, {
      repository: 'https://git.example.com/org/app.git',
      image: { registry: 'r.example' },
    }),
    200,
  );
  const report = (await conforms(t, 'GET /usage', await fetch(`${app.url}/usage?by=tenant,day`), 200)) as {
    rows: { tenant: string; builds: number }[];
  };
  t.like(report.rows[0], { tenant: 'org', builds: 1 });
  const csv = await fetch(`${app.url}/usage`, { headers: { accept: 'text/csv' } });
  t.regex(String(await conforms(t, 'GET /usage', csv, 200)), /^tenant,builds,reused,/);
  await conforms(t, 'GET /usage', await fetch(`${app.url}/usage?from=yesterday`), 400);
  const budgets = (await conforms(t, 'GET /usage/budgets', await fetch(`${app.url}/usage/budgets`), 200)) as {
    budgets: { tenant: string; monthlyBuildMinutes: number }[];
  };
  t.like(budgets.budgets[0], { tenant: 'org', monthlyBuildMinutes: 10 });
});
