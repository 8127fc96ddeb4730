// The Redis options together: one server, one cluster or Sentinels, never two; nodes and Sentinels
// are host:port; their password comes from a file and is never echoed; what /config shows of each.
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';
import { redisTargetOf, redisView } from '../../../../src/config/redis-target.js';
import { effectiveConfigView } from '../../../../src/config/view.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-redis-options-'));
const baseEnv = { DOCKER_CONFIG: join(dir, 'docker'), HOME: dir, TMPDIR: dir };
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = 'canary-cluster-password-7f3a';
const passwordFile = join(dir, 'redis-password');
writeFileSync(passwordFile, `${PASSWORD}\n`);

const problems = (argv: string[], env: Record<string, string> = {}): readonly string[] => {
  const err = (() => {
    try {
      loadConfig({ argv, env: { ...baseEnv, ...env } });
      return undefined;
    } catch (caught) {
      return caught as ConfigError;
    }
  })();
  return err?.problems ?? [];
};

test('redis.url and redis.clusterNodes together are refused, naming both', (t) => {
  const found = problems(['--redis-url', 'redis://:pw-in-url@127.0.0.1:6379'], {
    REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001',
  });
  t.is(found.length, 1);
  t.regex(
    found[0] ?? '',
    /--redis-url .* and --redis-cluster-nodes .* cannot be set together: give one server, one cluster or one set of Sentinels/,
  );
  t.false(found.join('\n').includes('pw-in-url'));
});

test('a cluster node that is not host:port is refused', (t) => {
  for (const bad of [
    '127.0.0.1',
    'redis://127.0.0.1:7000',
    'host:port',
    'a b:7000',
    '127.0.0.1:70000',
    'h:0',
  ]) {
    const found = problems(['--redis-cluster-nodes', `127.0.0.1:7000,${bad}`]);
    t.true(found.length > 0, bad);
    t.regex(found.join('\n'), /--redis-cluster-nodes|REDIS_CLUSTER_NODES/, bad);
  }
});

test('the password file and TLS switch are only for a cluster', (t) => {
  t.regex(problems(['--redis-password-file', passwordFile]).join('\n'), /only for --redis-cluster-nodes/);
  t.regex(
    problems(['--redis-url', 'redis://127.0.0.1', '--redis-tls']).join('\n'),
    /--redis-tls .* only for --redis-cluster-nodes/,
  );
  const missing = problems([
    '--redis-cluster-nodes',
    '127.0.0.1:7000',
    '--redis-password-file',
    join(dir, 'none'),
  ]);
  t.regex(missing.join('\n'), /--redis-password-file .* cannot be read \(ENOENT\)/);
});

test('a cluster: nodes, password and TLS reach the target; /config shows the nodes, never the password', (t) => {
  const config = loadConfig({
    argv: [
      '--redis-cluster-nodes',
      '10.0.0.1:7000,[::1]:7001',
      '--redis-password-file',
      passwordFile,
      '--redis-tls',
    ],
    env: baseEnv,
  });
  t.deepEqual(redisTargetOf(config.redis), {
    kind: 'cluster',
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '::1', port: 7001 },
    ],
    password: PASSWORD,
    tls: true,
  });
  const view = effectiveConfigView(config);
  t.deepEqual(view.redis, { configured: true, nodes: ['10.0.0.1:7000', '::1:7001'], tls: true });
  t.false(JSON.stringify(view).includes(PASSWORD));
});

test('one server: its endpoint; neither: embedded mode', (t) => {
  const server = loadConfig({ argv: ['--redis-url', 'rediss://:pw@r.example:6380/2'], env: baseEnv });
  const target = redisTargetOf(server.redis);
  t.deepEqual(target, { kind: 'server', url: 'rediss://:pw@r.example:6380/2' });
  if (target !== undefined)
    t.deepEqual(redisView(target), { host: 'r.example', port: 6380, tls: true, db: 2 });
  t.is(redisTargetOf(loadConfig({ argv: [], env: baseEnv }).redis), undefined);
});

test("Sentinels: with their primary's name only, alone; the target and what /config shows", (t) => {
  t.regex(
    problems(['--redis-sentinels', '127.0.0.1:26379']).join('\n'),
    /--redis-sentinels .* needs --redis-sentinel-name/,
  );
  t.regex(
    problems(['--redis-sentinel-name', 'primary']).join('\n'),
    /--redis-sentinel-name .* is only for --redis-sentinels/,
  );
  t.regex(
    problems([
      '--redis-sentinels',
      '127.0.0.1:26379',
      '--redis-sentinel-name',
      'p',
      '--redis-cluster-nodes',
      '127.0.0.1:7000',
    ]).join('\n'),
    /--redis-cluster-nodes .* and --redis-sentinels .* cannot be set together/,
  );
  t.true(problems(['--redis-sentinels', 'sentinel-without-port', '--redis-sentinel-name', 'p']).length > 0);
  const config = loadConfig({
    argv: [
      '--redis-sentinels',
      '10.0.0.1:26379,10.0.0.2:26379',
      '--redis-sentinel-name',
      'primary',
      '--redis-password-file',
      passwordFile,
    ],
    env: baseEnv,
  });
  t.deepEqual(redisTargetOf(config.redis), {
    kind: 'sentinel',
    sentinels: [
      { host: '10.0.0.1', port: 26379 },
      { host: '10.0.0.2', port: 26379 },
    ],
    name: 'primary',
    password: PASSWORD,
    tls: false,
  });
  const view = effectiveConfigView(config);
  t.deepEqual(view.redis, {
    configured: true,
    sentinels: ['10.0.0.1:26379', '10.0.0.2:26379'],
    name: 'primary',
    tls: false,
  });
  t.false(JSON.stringify(view).includes(PASSWORD));
});
