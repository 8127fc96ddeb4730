/**
 * The end of a replica's shutdown grace with builds still running (two real service processes on a
 * redis-server of the test's own, real builds on the stack's BuildKit): the build whose request
 * carried no credentials of its own goes back to the shared queue and runs to its end on the other
 * replica, answered once with the image it pushed; the one whose request carried credentials
 * (only the stopping replica held them) ends with the reason.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { httpsCreds, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { tagDigest } from '../helpers/prebuild-support.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { queueFile } from '../helpers/replica-sets.js';
import { getBuild as get, postAsync, replicaEnv, startReplicas, type Replica } from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

const file = queueFile(stack, 'hand-back');
let redis: RedisProcess;
let replicas: Replica[] = [];

test.before(async () => {
  redis = await startRedis();
  const env = (grace: string): Record<string, string> =>
    replicaEnv(stack, redis.url, {
      MAX_CONCURRENT_BUILDS: '2',
      GIT_CREDENTIALS_CONFIG_PATH: file.credentials,
      SHUTDOWN_GRACE_SECONDS: grace,
    });
  replicas = [...(await startReplicas(['a'], env('3'))), ...(await startReplicas(['b'], env('60')))];
});

test.after.always(async () => {
  await Promise.all(replicas.map((r) => r.service.lose()));
  await redis?.dispose();
});

function repository(): string {
  const nonce = randomBytes(8).toString('hex');
  return file.repository(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, nonce, 20));
}

/** An async build of `repository`, `body` its further fields. */
const accept = (
  replica: Replica,
  repository: string,
  body: Record<string, unknown> = {},
): Promise<BuildRecord> =>
  postAsync(replica, repository, { registry: stack.REGISTRY_ANON, name: uniqueName('hand-back') }, { body });

async function slowStepStarted(replica: Replica, id: string): Promise<void> {
  await eventually(
    async () => {
      const { imageBuildLogId } = await get(replica, id);
      if (imageBuildLogId === undefined) return false;
      return (await (await fetch(`${replica.url}/logs/${imageBuildLogId}`)).text()).includes(
        SLOW_STEP_STARTED,
      );
    },
    { timeout: 180_000, interval: 250, what: 'the slow step to start' },
  );
}

/** The replicas that logged the build of `repo` as succeeded, one name per line logged. */
const succeededOn = (repo: string): string[] =>
  replicas.flatMap((r) =>
    r.service
      .lines()
      .filter((l) => l.msg === 'build succeeded' && l.repository === repo)
      .map(() => r.name),
  );

test('at the end of the grace a build any replica can run goes back to the queue and ends on another', async (t) => {
  const [a, b] = replicas as [Replica, Replica];
  const portableRepo = repository();
  const ownRepo = repository();
  const portable = await accept(a, portableRepo);
  const own = await accept(a, ownRepo, { gitCredentials: httpsCreds() });
  await Promise.all([slowStepStarted(a, portable.id), slowStepStarted(a, own.id)]);

  // Every phase b answers for it until it ends: it ends once, at the end.
  const phases: string[] = [];
  const watch = (async () => {
    for (;;) {
      const record = await get(b, portable.id);
      if (phases.at(-1) !== record.phase) phases.push(record.phase);
      if (record.phase === 'finished') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();

  a.service.child.kill('SIGTERM');
  await a.service.waitForLog('grace period over: builds handed back to the queue', 30_000);
  t.not(await a.service.exited, 0, 'commands were killed at the end of the grace');

  await eventually(async () => (await get(b, portable.id)).phase === 'finished', {
    timeout: 240_000,
    interval: 250,
    what: 'the handed-back build to end on b',
  });
  await watch;
  const done = await get(b, portable.id);
  t.is(done.status, 'success', done.error);
  t.deepEqual(succeededOn(portableRepo), ['b'], 'run to its end once, on b');
  t.is(phases.indexOf('finished'), phases.length - 1, phases.join(' '));
  t.true(
    a.service.lines().some((l) => l.msg === 'build handed back to the queue' && l.buildId === portable.id),
  );
  t.true(b.service.lines().some((l) => l.msg === 'build taken from the queue' && l.buildId === portable.id));
  t.false(
    a.service.lines().some((l) => l.msg === 'build handed back to the queue' && l.buildId === own.id),
    'the credentials of its request were on a alone',
  );
  const answer = (done.answer?.body ?? {}) as Record<string, string>;
  t.is(await tagDigest(answer.registry ?? '', answer.name ?? '', answer.tag ?? ''), answer.digest);

  const ended = await get(b, own.id);
  t.is(ended.phase, 'finished');
  t.is(ended.status, 'failure');
  t.regex(ended.error ?? '', /the service is stopping/);
  t.deepEqual(succeededOn(ownRepo), []);
});
