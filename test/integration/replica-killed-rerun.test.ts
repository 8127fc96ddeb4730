/**
 * A replica killed without grace (SIGKILL) in the middle of its builds (two real service processes
 * on a redis-server and on a three-master Redis Cluster, real builds on the stack's BuildKit): the
 * build whose request carried no credentials of its own runs again on the other replica under its
 * id, succeeds once, the image in the registry is the record's, and its build.finished is
 * delivered once; the one whose request carried credentials (only the killed replica held them)
 * ends as lost, naming the replica.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver } from '../helpers/event-receiver.js';
import { tagDigest } from '../helpers/prebuild-support.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { startReplicaRedis } from '../helpers/replica-redis.js';
import {
  getBuild,
  onKind,
  postAsync,
  replicaEnv,
  serverGitCredentials,
  startReplicas,
  stopReplicas,
  succeededOn,
  untilFinished,
  type Replica,
} from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-killed-rerun-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const secret = newSecret();

async function slowStepStarted(replica: Replica, id: string): Promise<void> {
  await eventually(
    async () => {
      const { imageBuildLogId } = await getBuild(replica, id);
      if (imageBuildLogId === undefined) return false;
      return (await (await fetch(`${replica.url}/logs/${imageBuildLogId}`)).text()).includes(
        SLOW_STEP_STARTED,
      );
    },
    { timeout: 180_000, interval: 250, what: 'the slow step to start' },
  );
}

async function postOwn(replica: Replica, repository: string): Promise<BuildRecord> {
  const res = await fetch(`${replica.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify({
      repository,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('killed-own') },
    }),
  });
  if (res.status !== 202) throw new Error(`POST /build answered ${String(res.status)}: ${await res.text()}`);
  return (await res.json()) as BuildRecord;
}

for (const kind of REDIS_KINDS) {
  test.serial(
    `${kind}: a replica SIGKILLed mid-build: the build any replica may run runs again once`,
    async (t) => {
      const redis = await startReplicaRedis(kind);
      t.teardown(() => redis.dispose());
      const receiver = await startReceiver([secret]);
      t.teardown(() => receiver.close());
      const subscriptions = join(dir, `subscriptions-${kind}.yaml`);
      writeFileSync(
        subscriptions,
        JSON.stringify([{ name: 'deployer', url: receiver.url, secrets: [secret] }]),
      );
      const env = replicaEnv(stack, redis, {
        MAX_CONCURRENT_BUILDS: '2',
        GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, dir),
        EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
      });
      const replicas = await startReplicas(['A', 'B'], env);
      t.teardown(() => stopReplicas(replicas));
      const [a, b] = replicas as [Replica, Replica];
      await Promise.all(replicas.map((r) => onKind(r, kind)));
      const repo = (): string => {
        const made = ownDockerfileRepo(
          SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex'), 20),
        );
        t.teardown(made.remove);
        return made.repository;
      };

      const portable = await postAsync(a, repo(), {
        registry: stack.REGISTRY_ANON,
        name: uniqueName('killed'),
      });
      const own = await postOwn(a, repo());
      await Promise.all([slowStepStarted(b, portable.id), slowStepStarted(b, own.id)]);
      const pid = a.service.child.pid;
      await a.service.lose();

      const [done, lost] = (await untilFinished(b, [portable.id, own.id])) as [BuildRecord, BuildRecord];
      t.is(done.status, 'success', done.error);
      t.deepEqual(succeededOn(replicas, portable.id), { A: 0, B: 1 }, 'run to its end once, on B');
      t.true(
        b.service.lines().some((l) => l.msg === 'build taken from the queue' && l.buildId === portable.id),
        'B took it from the queue',
      );
      const answer = (done.answer?.body ?? {}) as Record<string, string>;
      t.is(await tagDigest(answer.registry ?? '', answer.name ?? '', answer.tag ?? ''), answer.digest);

      t.is(lost.status, 'failure');
      t.deepEqual(lost.answer, {
        status: 500,
        body: serviceError('BUILD_LOST', { replica: `${hostname()}:${String(pid)}` }).toBody(),
      });
      t.deepEqual(succeededOn(replicas, own.id), { A: 0, B: 0 });

      // Each build's build.finished delivered once, the one run again saying success.
      const finished = (id: string) =>
        receiver.received.filter((r) => {
          const data = r.event.data as { subject?: { id?: unknown } };
          return r.event.type.includes('build.finished') && data.subject?.id === id;
        });
      await eventually(() => finished(portable.id).length > 0 && finished(own.id).length > 0, {
        timeout: 120_000,
        interval: 250,
        what: 'both build.finished delivered',
      });
      t.is(
        new Set(finished(portable.id).map((r) => r.webhookId)).size,
        1,
        'one event for the build run again',
      );
      t.is(new Set(finished(own.id).map((r) => r.webhookId)).size, 1, 'one event for the lost build');
      t.regex(finished(portable.id)[0]?.raw ?? '', /success/);
    },
  );
}
