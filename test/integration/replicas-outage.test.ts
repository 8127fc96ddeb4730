// Three real service processes on a Redis of the test's own, stopped and started again: readiness
// fails on every replica, a build answers 503 with a clear error, the registry endpoints keep
// working, and everything recovers without a restart. The Redis password (a canary) never shows in
// the processes' output, /config, /metrics, error bodies or error tracking. On a redis-server and on
// a three-master Redis Cluster (every node stopped, then the same cluster formed again).
import test from 'ava';
import { stackEnv } from '../stack/env.js';
import { REDIS_KINDS, type RedisKind } from '../helpers/redis-kind.js';
import { replicaSets } from '../helpers/replica-sets.js';
import { getText, postJson, replicaEnv, within, type Replica } from '../helpers/replicas.js';
import { startSentryReceiver, type SentryReceiver } from '../helpers/sentry-receiver.js';

const stack = stackEnv();
/** Error tracking of each kind's replicas: what one kind reported is not taken for the other's. */
const sentries = new Map<RedisKind, SentryReceiver>();
const sentryOf = (kind: RedisKind): SentryReceiver => sentries.get(kind) as SentryReceiver;
const replicasOn = replicaSets(['A', 'B', 'C'], (redis) =>
  replicaEnv(stack, redis, { ERROR_TRACKING_DSN: sentryOf(redis.kind).dsn }),
);

test.before(async () => {
  for (const kind of REDIS_KINDS) sentries.set(kind, await startSentryReceiver());
});
test.after.always(async () => {
  for (const sentry of sentries.values()) await sentry.close();
});

const ready = async (r: Replica): Promise<boolean> => (await getText(r, '/health/ready')).status === 200;
const notReady = async (r: Replica): Promise<boolean> => {
  const res = await getText(r, '/health/ready');
  return res.status === 503 && res.text.includes('Redis');
};

const buildRequest = (label: string) => ({
  repository: `${stack.GIT_HTTPS_URL}/feature.git`,
  gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
  image: { registry: stack.REGISTRY_ANON, name: `it/outage-${label}-${Date.now()}` },
});

/** `<registry>/<name>:<tag>` of the stack's base image, as GET /image query parameters. */
function baseImageQuery(): string {
  const ref = stack.BASE_IMAGE_ANON;
  const slash = ref.indexOf('/');
  const colon = ref.lastIndexOf(':');
  return new URLSearchParams({
    registry: ref.slice(0, slash),
    name: ref.slice(slash + 1, colon),
    tag: ref.slice(colon + 1),
  }).toString();
}

for (const kind of REDIS_KINDS) {
  test.serial(
    `${kind}: Redis stopped: readiness fails everywhere, builds and logs answer 503, /image answers; Redis back: builds work again`,
    async (t) => {
      const { redis, replicas } = await replicasOn(kind);
      const sentry = sentryOf(kind);
      for (const r of replicas) await within(`${r.name} ready`, 60_000, () => ready(r));
      const [a, b] = [replicas[0] as Replica, replicas[1] as Replica];
      const before = await postJson(a, '/build', {
        ...buildRequest('before'),
        repository: `${stack.GIT_HTTPS_URL}/no-such-repo.git`,
      });
      t.is(before.status, 500);
      const logId = String(before.body.logId);

      await redis.stop();
      const took = await Promise.all(
        replicas.map((r) => within(`${r.name} not ready`, 30_000, () => notReady(r))),
      );
      t.log(`readiness failed after ${took.join(', ')} ms`);

      const refused = await postJson(a, '/build', buildRequest('refused'));
      t.is(refused.status, 503);
      t.regex(String(refused.body.error), /shared store \(Redis\) is unavailable/);
      t.is(refused.body.logId, undefined);
      const log = await getText(b, `/logs/${logId}`);
      t.is(log.status, 503);
      t.regex(log.text, /shared store \(Redis\) is unavailable/);
      const image = await getText(b, `/image?${baseImageQuery()}`);
      t.is(image.status, 200, image.text);

      await redis.start();
      const back = await Promise.all(
        replicas.map((r) => within(`${r.name} ready again`, 60_000, () => ready(r))),
      );
      t.log(`ready again ${back.join(', ')} ms after Redis answered`);
      const after = await postJson(b, '/build', buildRequest('after'));
      t.is(after.status, 200, JSON.stringify(after.body));
      t.is((await getText(a, `/logs/${String(after.body.imageBuildLogId)}`)).status, 200);
      // The 503 was reported to error tracking (so the canary check below looks at real events).
      await sentry.waitForEvent((e) => JSON.stringify(e).includes('STORE_UNAVAILABLE'));
    },
  );

  test.serial(
    `${kind}: the Redis password never appears in output, /config, /metrics, errors or error tracking`,
    async (t) => {
      const { redis, replicas } = await replicasOn(kind);
      const sentry = sentryOf(kind);
      const canary = redis.password;
      t.true(canary.startsWith('canary-'));
      for (const r of replicas) {
        for (const path of [
          '/config',
          '/metrics',
          '/health/ready',
          '/logs/git-00000000-0000-4000-8000-000000000000',
        ]) {
          t.false((await getText(r, path)).text.includes(canary), `${r.name} ${path}`);
        }
        t.false(r.service.stdout().includes(canary), `${r.name} stdout`);
        t.false(r.service.stderr().includes(canary), `${r.name} stderr`);
        // The endpoint is logged, so the check above looked at Redis log lines.
        t.true(
          r.service.lines().some((l) => l.msg === 'redis connected'),
          `${r.name} logged its Redis state`,
        );
      }
      t.false(sentry.rawText().includes(canary), 'error tracking');
      t.false(sentry.rawText().includes(encodeURIComponent(canary)), 'error tracking');
    },
  );
}
