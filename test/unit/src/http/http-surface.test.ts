import test from 'ava';
import { startApp } from '../../../helpers/app.js';
import { silentEndpoint } from '../../../helpers/silent-endpoint.js';
import { metricValue, parseMetrics, sampleValue } from '../../../helpers/metrics.js';

test('probes answer with their contract bodies', async (t) => {
  const endpoint = await silentEndpoint(t);
  const app = await startApp({ builderEndpoints: [endpoint] });
  t.teardown(app.close);
  for (const [path, body] of [
    ['/health/startup', { status: 'started' }],
    ['/health/live', { status: 'ok' }],
    // Readiness lists each builder (docs/fleet.md); one counts as up until a probe says otherwise,
    // and this one's probe waits for its timeout.
    ['/health/ready', { status: 'ready', builders: [{ builder: endpoint, state: 'up', platforms: [] }] }],
  ] as const) {
    const res = await fetch(app.url + path);
    t.is(res.status, 200, path);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await res.json(), body);
  }
});

test('readiness fails while no builder endpoint is configured', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const res = await fetch(`${app.url}/health/ready`);
  t.is(res.status, 503);
  t.deepEqual(await res.json(), { status: 'not ready', reason: 'no builder endpoint configured' });
});

test('unknown paths and wrong methods on known paths answer 404 not found', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  for (const [method, path] of [
    ['GET', '/nope'],
    ['POST', '/health/live'],
    ['GET', '/build'],
    ['PUT', '/image'],
    ['DELETE', '/metrics'],
  ]) {
    const res = await fetch(app.url + path, { method });
    t.is(res.status, 404, `${method} ${path}`);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await res.json(), { error: 'not found' });
  }
});

test('invalid JSON gets 400 invalid JSON body; oversized bodies get 413 JSON', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const bad = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"repository": ',
  });
  t.is(bad.status, 400);
  t.deepEqual(await bad.json(), { error: 'invalid JSON body' });

  const big = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ repository: 'x'.repeat(2 * 1024 * 1024) }),
  });
  t.is(big.status, 413);
  const body = (await big.json()) as { error: string };
  t.regex(body.error, /too large/);

  // Both are build attempts: counted as invalid requests.
  t.is(await metricValue(app.url, 'service_builds_total', { status: 'invalid_request' }), 2);
});

test('metrics expose the contract names with every label value at 0', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const res = await fetch(`${app.url}/metrics`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const metrics = parseMetrics(await res.text());
  const value = (name: string, labels: Record<string, string> = {}) => sampleValue(metrics, name, labels);
  for (const status of ['success', 'failure', 'invalid_request', 'busy']) {
    t.is(value('service_builds_total', { status }), 0, status);
    t.is(value('service_build_duration_seconds_bucket', { le: '3600', status }), 0, status);
  }
  for (const result of ['exists', 'absent', 'error']) {
    t.is(value('service_image_checks_total', { result }), 0, result);
  }
  for (const result of ['deleted', 'unsupported', 'error']) {
    t.is(value('service_image_deletes_total', { result }), 0, result);
  }
  for (const result of ['found', 'absent', 'no_metadata', 'error']) {
    t.is(value('service_devcontainer_lookups_total', { result }), 0, result);
  }
  t.is(metrics.types.get('service_builds_total'), 'counter');
  t.is(metrics.types.get('service_build_duration_seconds'), 'histogram');
  t.is(typeof value('process_cpu_user_seconds_total'), 'number');
  t.is(value('service_builds_capacity'), 4);
});

/** One prebuild configuration, as configured and as /config shows it (it holds no secret). */
const PREBUILD = {
  repository: 'https://127.0.0.1:1/t/app.git',
  branches: ['main'],
  image: { registry: 'r.example', name: 't/app' },
  refreshOnBaseChange: true,
};

test('the config view shows the contract fields and no secret', async (t) => {
  const app = await startApp({
    builderEndpoints: ['tcp://127.0.0.1:1234'],
    gitCredentials: [
      { host: 'git.example', kind: 'https', username: 'u', token: 'tok-SECRET-1' },
      { host: 'ssh.example', kind: 'ssh', privateKey: 'KEY-SECRET-2', pinnedHostKey: 'ssh-ed25519 AAAA' },
    ],
    registryMappingRules: [{ registry: 'r.example', hostMatch: 'git.example' }],
    registryAuth: { auths: { 'r.example': { auth: Buffer.from('u:PASS-SECRET-3').toString('base64') } } },
    buildSecrets: [
      { id: 'npmrc', value: 'NPM-SECRET-4', repositories: [{ host: 'git.example', pathPrefix: 't/' }] },
    ],
    prebuilds: {
      configurations: [PREBUILD],
      reconcileIntervalSeconds: 300,
      refreshIntervalSeconds: 21600,
      hookSecrets: { github: 'HOOK-SECRET-5' },
    },
    events: {
      retrySeconds: [5],
      subscriptions: [
        {
          name: 'hook',
          url: 'https://hooks.example:8443/p?k=QUERY-SECRET-5',
          secrets: [`whsec_${Buffer.from('SECRET-6'.repeat(4)).toString('base64')}`],
          types: ['dev.cdevents.build.finished'],
        },
      ],
    },
  });
  t.teardown(app.close);
  const res = await fetch(`${app.url}/config`);
  t.is(res.status, 200);
  const text = await res.text();
  const whsec = Buffer.from('SECRET-6'.repeat(4)).toString('base64');
  for (const secret of ['SECRET', Buffer.from('u:PASS-SECRET-3').toString('base64'), whsec]) {
    t.false(text.includes(secret), secret);
  }
  t.deepEqual(JSON.parse(text), {
    builderConfigured: true,
    builderName: 'service-remote',
    builders: ['tcp://127.0.0.1:1234'],
    builderPlatforms: [{ builder: 'tcp://127.0.0.1:1234', platforms: [] }],
    nativePlatformsOnly: false,
    builderTls: { ca: false, clientCertificate: false },
    sshHostKeyPolicy: 'tofu',
    defaultPlatforms: [],
    defaultBuildOptions: { noCache: false, mode: 'auto' },
    gitCredentials: [
      { host: 'git.example', kind: 'https' },
      { host: 'ssh.example', kind: 'ssh' },
    ],
    registryMappingRules: [{ registry: 'r.example' }],
    buildSecrets: [{ id: 'npmrc', repositories: [{ host: 'git.example', pathPrefix: 't/' }] }],
    eventSubscriptions: [
      { name: 'hook', host: 'hooks.example:8443', types: ['dev.cdevents.build.finished'] },
    ],
    insecureRegistries: [],
    allowInsecureGitProtocols: false,
    cloneTimeoutSeconds: 600,
    buildTimeoutSeconds: 3600,
    maxConcurrentBuilds: 4,
    maxBuildsPerBuilder: 0,
    buildReuse: true,
    retention: {
      mode: 'off',
      keepPerBranch: 2,
      keepServedDays: 30,
      keepTags: [],
      intervalMinutes: 60,
      repositories: [],
    },
    supplyChain: {
      provenance: 'min',
      sbom: false,
      provenanceBuilderId: 'urn:image-build-service:builder',
      signing: { enabled: false },
    },
    registryAuth: [{ registry: 'r.example' }],
    redis: { configured: false },
    prebuilds: {
      configurations: [PREBUILD],
      reconcileIntervalSeconds: 300,
      refreshIntervalSeconds: 21600,
      hooks: { github: true, gitlab: false, gitea: false },
    },
  });
});

test('the config view shows the Redis endpoint, never its URL or password', async (t) => {
  const app = await startApp({ redis: { url: 'rediss://user:PASS-SECRET-9@redis.example:6380/3' } });
  t.teardown(app.close);
  const text = await (await fetch(`${app.url}/config`)).text();
  t.false(text.includes('PASS-SECRET-9'));
  t.false(text.includes('rediss://'));
  t.deepEqual((JSON.parse(text) as { redis: unknown }).redis, {
    configured: true,
    host: 'redis.example',
    port: 6380,
    tls: true,
    db: 3,
  });
});

test('request logs carry the service fields and never the registry password header', async (t) => {
  const app = await startApp({ observability: { serviceName: 'svc-x', environment: 'staging' } });
  t.teardown(app.close);
  await fetch(`${app.url}/image?registry=r&name=n&tag=t`, {
    headers: { 'X-Registry-Username': 'someone', 'X-Registry-Password': 'hunter2-SECRET' },
  });
  const lines = app.logLines();
  t.true(lines.length > 0);
  for (const line of lines) {
    t.is(line['service.name'], 'svc-x');
    t.is(line['deployment.environment.name'], 'staging');
  }
  t.false(app.logText().includes('hunter2-SECRET'));
});
