// compose.yaml, the Dockerfile and the chart agree on how the service runs: uid/gid 2000, a
// read-only root, the same builder state directory, and only environment variables the service reads.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { OPTIONS } from '../../../src/config/options.js';
import { render } from '../../helpers/chart/helm.js';
import { container } from '../../helpers/chart/pod.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Record<string, unknown>>;
};
const service = compose.services['image-build-service'] ?? {};

const dockerfileEnv = (name: string): string | undefined =>
  new RegExp(`^\\s+${name}=(\\S+)`, 'm').exec(dockerfile)?.[1];

test('one builder state directory everywhere (Dockerfile ENV, chart, compose volume)', async (t) => {
  const dir = dockerfileEnv('DOCKER_CONFIG');
  t.is(dir, '/var/lib/builder-state');
  const pod = container(await render());
  t.is(pod.env.find((e) => e.name === 'DOCKER_CONFIG')?.value, dir);
  t.true(pod.volumeMounts.some((m) => m.mountPath === dir && m.name === 'builder-state'));
  t.true((service.volumes as string[]).includes(`builder-state:${dir}`));
});

test('the image runs as 2000:2000 under tini, with HOME and caches in /tmp', (t) => {
  t.regex(dockerfile, /^USER 2000:2000$/m);
  t.regex(dockerfile, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "\/app\/dist\/src\/main\.js"\]$/m);
  for (const name of ['HOME', 'TMPDIR']) t.is(dockerfileEnv(name), '/tmp', name);
  for (const name of ['XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'npm_config_cache']) {
    t.regex(dockerfileEnv(name) ?? '', /^\/tmp\//, name);
  }
  t.regex(dockerfile, /^ARG BASE_IMAGE=node:24-bookworm-slim$/m);
  t.notRegex(dockerfile, /^# syntax=/m);
});

test('compose runs the service like the chart: read-only, 2000:2000, no capabilities, tmpfs /tmp', (t) => {
  t.is(service.read_only, true);
  t.is(service.user, '2000:2000');
  t.deepEqual(service.cap_drop, ['ALL']);
  t.true((service.tmpfs as string[]).some((entry) => entry.startsWith('/tmp:')));
  t.deepEqual((service.build as { context: string }).context, '.');
});

test('compose sets only variables the service reads, pointing at its own builder and registry', (t) => {
  const env = service.environment as Record<string, string>;
  const known = new Set(OPTIONS.map((o) => o.env));
  for (const name of Object.keys(env)) t.true(known.has(name), name);
  t.is(env.BUILDER_ENDPOINT, 'tcp://buildkitd:1234');
  t.is(env.INSECURE_REGISTRIES, 'registry:5000');
  t.deepEqual(compose.services.buildkitd?.command, [
    '--addr',
    'tcp://0.0.0.0:1234',
    '--config',
    '/etc/buildkit/buildkitd.toml',
  ]);
});

test('compose runs two replicas on one Redis behind one port', (t) => {
  const env = service.environment as Record<string, string>;
  const second = compose.services['image-build-service-b'] ?? {};
  t.deepEqual(second.extends, 'image-build-service');
  // Its own builder state; everything else (REDIS_URL included) is the first replica's.
  t.deepEqual(second.volumes, ['builder-state-b:/var/lib/builder-state']);
  t.regex(env.REDIS_URL ?? '', /^redis:\/\/:\$\{REDIS_PASSWORD:-[^}]+\}@redis:6379$/);
  const redis = compose.services.redis ?? {};
  t.truthy(redis.healthcheck);
  t.like(service.depends_on, { redis: { condition: 'service_healthy' } });
  const configs = (compose as unknown as { configs: Record<string, { content: string }> }).configs;
  // The password the service uses is the one the server requires (the same variable and default).
  const password = /\$\{REDIS_PASSWORD:-[^}]+\}/.exec(env.REDIS_URL ?? '')?.[0] ?? 'none';
  t.true(configs['redis-conf']?.content.includes(`requirepass ${password}`));
  // Only the load balancer publishes a port, and it forwards to both replicas.
  const published = Object.entries(compose.services)
    .filter(([, s]) => (s.ports as string[] | undefined)?.some((p) => p.endsWith(':8080')))
    .map(([name]) => name);
  t.deepEqual(published, ['load-balancer']);
  for (const name of ['image-build-service', 'image-build-service-b']) {
    t.true(configs['nginx-conf']?.content.includes(`server ${name}:8080;`), name);
  }
});
