/**
 * Build secrets in the real service process (docs/secrets.md), in Redis mode with error tracking:
 * a request secret and a scoped server entry (BUILD_SECRETS_CONFIG_PATH) reach the step; a build
 * that fails with a secret offered reaches error tracking; no canary value is in Redis (every key
 * and value), the process's output, error tracking, /builds, /metrics, /config, the logs or any
 * sampled argv or environment. A server file with an unscoped entry stops startup.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownDockerfileRepo, stack } from '../helpers/build-support.js';
import { dumpRedis } from '../helpers/redis-dump.js';
import { imageBytes, imageLeaks, sampleProcesses, sha256Hex } from '../helpers/image-bytes.js';
import { startRedis } from '../helpers/redis-process.js';
import { fileReplicas } from '../helpers/replica-sets.js';
import { getText, postJson, replicaEnv, type Replica } from '../helpers/replicas.js';
import { startSentryReceiver, type SentryReceiver } from '../helpers/sentry-receiver.js';
import { spawnService } from '../helpers/service-process.js';
import { SECRETS_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

const canary = (): string => `CANARY-${randomBytes(12).toString('hex')}`;
const SERVER_VALUE = canary();
const dir = mkdtempSync(join(tmpdir(), 'ibs-secrets-redis-'));
const secretsFile = join(dir, 'build-secrets.json');
let sentry: SentryReceiver;

test.before(async () => {
  sentry = await startSentryReceiver();
  const scope = { host: new URL(stack.GIT_HTTPS_URL).hostname, pathPrefix: 'secrets.git' };
  writeFileSync(secretsFile, JSON.stringify([{ id: 'npmrc', value: SERVER_VALUE, repositories: [scope] }]));
});
test.after.always(async () => {
  await sentry?.close();
  rmSync(dir, { recursive: true, force: true });
});
const replicasOn = fileReplicas(
  () => startRedis(),
  ['A'],
  (redis) =>
    replicaEnv(stack, redis.url, { ERROR_TRACKING_DSN: sentry.dsn, BUILD_SECRETS_CONFIG_PATH: secretsFile }),
);

const body = (repository: string, label: string, buildSecrets?: Record<string, string>) => ({
  repository,
  gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
  image: {
    registry: stack.REGISTRY_ANON,
    name: `it/secrets-redis-${label}-${randomBytes(4).toString('hex')}`,
  },
  buildOptions: { noCache: true },
  ...(buildSecrets === undefined ? {} : { buildSecrets }),
});

test('request and server secrets in Redis mode: in the step, nowhere else (Redis, output, error tracking)', async (t) => {
  const { redis, replicas } = replicasOn();
  const replica = replicas[0] as Replica;
  const [requestValue, otherValue, failedValue] = [canary(), canary(), canary()];
  const canaries = [SERVER_VALUE, requestValue, otherValue, failedValue];
  const sampler = sampleProcesses(canaries);
  const fromRequest = await postJson(
    replica,
    '/build',
    body(`${stack.GIT_HTTPS_URL}/secrets.git`, 'request', { npmrc: requestValue, other: otherValue }),
  );
  const fromServer = await postJson(replica, '/build', body(`${stack.GIT_HTTPS_URL}/secrets.git`, 'server'));
  const other = ownDockerfileRepo(
    SECRETS_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
  );
  t.teardown(other.remove);
  const failed = await postJson(
    replica,
    '/build',
    body(other.repository, 'outside', { unrelated: failedValue }),
  );
  const sampled = sampler.stop();

  t.is(fromRequest.status, 200, JSON.stringify(fromRequest.body));
  t.is(fromServer.status, 200, JSON.stringify(fromServer.body));
  t.is(failed.status, 500, JSON.stringify(failed.body));
  const logs: string[] = [];
  for (const [res, value] of [
    [fromRequest, requestValue],
    [fromServer, SERVER_VALUE],
  ] as const) {
    const image = await imageBytes(stack.REGISTRY_ANON, String(res.body.name), String(res.body.tag));
    t.is(image.files.get('npmrc.sha256')?.toString().split(/\s+/)[0], sha256Hex(value));
    for (const secret of canaries) t.deepEqual(imageLeaks(image, secret), [], 'image bytes');
    for (const id of [res.body.gitCloneLogId, res.body.imageBuildLogId])
      logs.push((await getText(replica, `/logs/${String(id)}`)).text);
  }
  logs.push((await getText(replica, `/logs/${String(failed.body.logId)}`)).text);
  t.regex(logs.at(-1) ?? '', /failed to solve: secret npmrc: not found/);
  await sentry.waitForEvent(() => true);

  t.true(
    [...sampled.commands].some((c) => c.includes('buildx build')),
    [...sampled.commands].join(', '),
  );
  t.deepEqual(sampled.leaks, [], 'argv and environments');
  const places: Record<string, string> = {
    redis: await dumpRedis(redis.url),
    'service output': replica.service.stdout() + replica.service.stderr(),
    'error tracking': sentry.rawText(),
    logs: logs.join('\n'),
    answers: JSON.stringify([fromRequest.body, fromServer.body, failed.body]),
  };
  for (const path of ['/builds', '/metrics', '/config']) places[path] = (await getText(replica, path)).text;
  t.true(
    (places.redis ?? '').includes(String(fromRequest.body.imageBuildLogId)),
    'the Redis dump holds the builds',
  );
  for (const [where, text] of Object.entries(places))
    for (const secret of canaries) t.false(text.includes(secret), `${where} holds a canary`);
});

test('a server file with an unscoped entry stops startup, naming the entry and not its value', async (t) => {
  const value = canary();
  const file = join(dir, 'unscoped.yaml');
  writeFileSync(file, `- id: npmrc\n  value: ${value}\n`);
  const service = spawnService(['--port', '0'], { BUILD_SECRETS_CONFIG_PATH: file });
  const code = await service.exited;
  t.not(code, 0);
  const output = service.stdout() + service.stderr();
  t.regex(output, /build secrets file .*unscoped\.yaml: entry "npmrc": no repositories/);
  t.false(output.includes(value));
});
