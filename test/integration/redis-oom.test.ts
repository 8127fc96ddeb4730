/**
 * Redis at `maxmemory` (a redis-server of the test's own, `maxmemory-policy noeviction`, filled by
 * the test until it refuses writes with OOM), under a real service process: new work is answered
 * 503 with Retry-After, the build running goes on to its end, the build queued is never dropped,
 * and once memory frees everything recovers by itself: the queued build runs, new work is taken.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { Redis } from 'ioredis';
import type { BuildRecord } from '../../src/builds/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { replyCode } from '../../src/redis/reply-code.js';
import { stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { queueFile } from '../helpers/replica-sets.js';
import {
  getBuild,
  postAsync,
  postAsyncAnswer,
  replicaEnv,
  startReplicas,
  type Replica,
} from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

const BALLAST_BYTES = 1024 * 1024;
const MAXMEMORY = '24mb';
const file = queueFile(stack, 'redis-oom');
let redis: RedisProcess;
let raw: Redis;
let replica: Replica;

test.before(async () => {
  redis = await startRedis(['--maxmemory', MAXMEMORY, '--maxmemory-policy', 'noeviction']);
  raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  [replica] = (await startReplicas(
    ['a'],
    replicaEnv(stack, redis.url, {
      MAX_CONCURRENT_BUILDS: '1',
      GIT_CREDENTIALS_CONFIG_PATH: file.credentials,
    }),
  )) as [Replica];
});

test.after.always(async () => {
  await replica?.service.lose();
  raw?.disconnect();
  await redis?.dispose();
});

const repository = (dockerfile: string): string => file.repository(dockerfile);

const nonce = (): string => randomBytes(8).toString('hex');

const image = (): { registry: string; name: string } => ({
  registry: stack.REGISTRY_ANON,
  name: uniqueName('oom'),
});

/** An async build of `repo`: what the replica answers, whatever the status. */
const posted = (repo: string) =>
  postAsyncAnswer<{ error?: string }>(replica, { repository: repo, image: image() });

/** An async build of `repo`, accepted (any other answer throws). */
const accepted = (repo: string): Promise<BuildRecord> => postAsync(replica, repo, image());

const record = (id: string): Promise<BuildRecord> => getBuild(replica, id);

/**
 * Writes ballast keys of 1 MiB until Redis answers OOM, then sets `maxmemory` a few MiB below what
 * it uses: a write refused while its own bytes are counted leaves memory just under the limit, and
 * the service's own writes would come and go across it. The ballast's names, to free it.
 */
async function fillRedis(): Promise<string[]> {
  const keys: string[] = [];
  for (let full = false; !full;) {
    const key = `ballast:${String(keys.length)}`;
    full = await raw.set(key, Buffer.alloc(BALLAST_BYTES, 1)).then(
      () => false,
      (err: unknown) => {
        if (replyCode(err) !== 'OOM') throw err;
        return true;
      },
    );
    if (!full) keys.push(key);
    if (keys.length > 1000) throw new Error('Redis never reached its maxmemory');
  }
  const used = Number(/used_memory:(\d+)/.exec(await raw.info('memory'))?.[1]);
  await raw.config('SET', 'maxmemory', String(used - 4 * BALLAST_BYTES));
  return keys;
}

const refusesWrites = async (): Promise<boolean> =>
  raw.set('probe', '1').then(
    () => false,
    (err: unknown) => replyCode(err) === 'OOM',
  );

/** Whether the replica logged `msg` of the build of `repo` (each build has a repository of its own). */
const logged = (msg: string, repo: string): boolean =>
  replica.service.lines().some((l) => l.msg === msg && l.repository === repo);

test('at maxmemory: 503 with Retry-After to new work, the running build ends, the queued one waits, then all recovers', async (t) => {
  const runningRepo = repository(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce(), 12));
  const running = await accepted(runningRepo);
  await eventually(
    async () => {
      const { imageBuildLogId } = await record(running.id);
      if (imageBuildLogId === undefined) return false;
      return (await (await fetch(`${replica.url}/logs/${imageBuildLogId}`)).text()).includes(
        SLOW_STEP_STARTED,
      );
    },
    { timeout: 180_000, interval: 250, what: 'the running build to reach its slow step' },
  );
  const queuedRepo = repository(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_OOM_NONCE=${nonce()}\n`);
  const queued = await accepted(queuedRepo);
  t.is(queued.phase, 'queued', 'the one slot is taken: it waits');

  const ballast = await fillRedis();
  t.true(await refusesWrites(), 'Redis is at its maxmemory');
  const refused = await posted(repository(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_OOM_NONCE=${nonce()}\n`));
  t.is(refused.status, 503);
  t.is(refused.body.error, serviceError('STORE_UNAVAILABLE').message);
  t.truthy(refused.headers.get('retry-after'));
  t.is((await record(queued.id)).phase, 'queued', 'the queued build is still there');

  // The running build goes on while Redis refuses writes: its step ends, it pushes, it is answered.
  await replica.service.waitForLog('redis out of memory: writes refused until memory frees');
  await eventually(() => logged('build succeeded', runningRepo) || logged('build failed', runningRepo), {
    timeout: 180_000,
    interval: 250,
    what: 'the running build to end',
  });
  t.true(logged('build succeeded', runningRepo), 'the running build succeeded');
  t.true(await refusesWrites(), 'still at maxmemory when it ended');
  t.is((await record(queued.id)).phase, 'queued', 'the queued build waits, never dropped');

  await raw.del(...ballast);
  await raw.config('SET', 'maxmemory', MAXMEMORY);
  t.false(await refusesWrites(), 'memory freed');
  await eventually(async () => (await record(running.id)).phase === 'finished', {
    timeout: 60_000,
    interval: 250,
    what: 'the running build’s record to end',
  });
  t.is((await record(running.id)).status, 'success');
  await eventually(async () => (await record(queued.id)).phase === 'finished', {
    timeout: 180_000,
    interval: 250,
    what: 'the queued build to run and end',
  });
  const ended = await record(queued.id);
  t.is(ended.status, 'success', ended.error);
  t.true(logged('build succeeded', queuedRepo), 'it ran here once memory freed');
  const again = await posted(repository(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_OOM_NONCE=${nonce()}\n`));
  t.is(again.status, 202, 'new work is taken again, with no restart');
});
