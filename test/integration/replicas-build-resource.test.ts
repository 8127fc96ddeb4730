/**
 * A build as a resource across replicas sharing one Redis: started on A, it is awaited (a long poll)
 * and read on B; a DELETE on B cancels it on A; when the replica running it dies, its record ends
 * as a failure naming that replica, read on B within 45 s; a canary registry password given to a
 * build is in no record, answer, Idempotency-Key or Redis value. On a redis-server and on a
 * three-master Redis Cluster, with the same assertions.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { serviceError } from '../../src/errors/errors.js';
import { httpsCreds, httpsRepo, ownDockerfileRepo, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { REDIS_KINDS, type RedisKind } from '../helpers/redis-kind.js';
import { replicaSets, type ReplicaSet } from '../helpers/replica-sets.js';
import {
  getText,
  listBuilds,
  replicaEnv,
  startReplicas,
  type JsonAnswer,
  type Replica,
} from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE, SLOW_STEP_STARTED } from '../stack/fixtures.js';
import { idempotencyKey } from '../../src/redis/keys.js';

const replicasOn = replicaSets(['A', 'B'], (redis) => replicaEnv(stack, redis));

async function call(url: string, init: RequestInit = {}): Promise<JsonAnswer> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const startAsync = (on: Replica, body: unknown, headers: Record<string, string> = {}) =>
  call(`${on.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Prefer: 'respond-async', ...headers },
    body: JSON.stringify(body),
  });

const request = (repository: string, label: string) => ({
  repository,
  gitCredentials: httpsCreds(),
  image: { registry: stack.REGISTRY_ANON, name: uniqueName(label) },
});

/** Long polls GET /builds/{id}?wait=20 on `on` until the record carries its answer. */
async function answered(on: Replica, id: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const polled = await call(`${on.url}/builds/${id}?wait=20`);
      if (polled.status !== 200) throw new Error(`GET /builds/${id} on ${on.name} answered ${polled.status}`);
      return polled.body.answer !== undefined && polled.body;
    },
    { timeout: 600_000, interval: 0, what: `the answer of ${id} on ${on.name}` },
  );
}

/** A repository of its own whose RUN step is silent for a while (a nonce: BuildKit runs it itself). */
function slowRepository(t: { teardown: (fn: () => void) => void }): string {
  const repo = ownDockerfileRepo(
    SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex')),
  );
  t.teardown(repo.remove);
  return repo.repository;
}

/** Until the build's silent step has started (its img log read on `on`). */
async function slowStepStarted(on: Replica, id: string): Promise<void> {
  await eventually(
    async () => {
      const record = (await call(`${on.url}/builds/${id}`)).body;
      if (typeof record.imageBuildLogId !== 'string') return false;
      return (await getText(on, `/logs/${record.imageBuildLogId}`)).text.includes(SLOW_STEP_STARTED);
    },
    { timeout: 180_000, interval: 250, what: `build ${id} to reach its silent step` },
  );
}

/** The scenarios, each on a set of replicas A and B. */
const scenarios: [string, (t: ExecutionContext, set: ReplicaSet) => Promise<void>][] = [];
const scenario = (title: string, run: (t: ExecutionContext, set: ReplicaSet) => Promise<void>): void => {
  scenarios.push([title, run]);
};

scenario(
  'a build started on A is awaited and read on B, with the answer A would have given',
  async (t, { replicas }) => {
    const replica = (i: number): Replica => replicas[i] as Replica;
    const started = await startAsync(replica(0), request(httpsRepo('image'), 'replicas-async'));
    t.is(started.status, 202);
    const id = String(started.body.id);
    const onB = await answered(replica(1), id);
    t.is(onB.status, 'success');
    const answer = onB.answer as { status: number; body: Record<string, unknown> };
    t.is(answer.status, 200);
    t.regex(String(answer.body.digest), /^sha256:[0-9a-f]{64}$/);
    t.deepEqual(
      (await call(`${replica(0).url}/builds/${id}`)).body,
      (await call(`${replica(1).url}/builds/${id}`)).body,
    );
  },
);

scenario(
  'a DELETE on B cancels the build running on A: its slot on A is freed, its answer says who',
  async (t, { replicas }) => {
    const replica = (i: number): Replica => replicas[i] as Replica;
    const started = await startAsync(replica(0), request(slowRepository(t), 'replicas-delete'));
    t.is(started.status, 202);
    const id = String(started.body.id);
    await slowStepStarted(replica(1), id);
    t.is(await metricValue(replica(0).url, 'service_builds_in_flight'), 1);
    const deleted = await call(`${replica(1).url}/builds/${id}`, { method: 'DELETE' });
    t.is(deleted.status, 202);
    await eventually(async () => (await metricValue(replica(0).url, 'service_builds_in_flight')) === 0, {
      timeout: 15_000,
      interval: 100,
      what: 'the slot on A to be freed',
    });
    const record = await answered(replica(1), id);
    t.is(record.status, 'failure');
    const answer = record.answer as { status: number; body: Record<string, unknown> };
    t.is(answer.status, 500);
    t.true(String(answer.body.error).includes(`cancelled by DELETE /builds/${id}`));
    t.is((await call(`${replica(0).url}/builds/${id}`, { method: 'DELETE' })).status, 409);
  },
);

scenario(
  'a build whose replica dies ends as a failure naming that replica, read on B within 45 s',
  async (t, { redis, replicas, more }) => {
    const replica = (i: number): Replica => replicas[i] as Replica;
    const [doomed] = await startReplicas(['C'], replicaEnv(stack, redis));
    if (doomed === undefined) throw new Error('no replica C');
    more.push(doomed);
    const started = await startAsync(doomed, request(slowRepository(t), 'replicas-lost'));
    t.is(started.status, 202);
    const id = String(started.body.id);
    await slowStepStarted(replica(1), id);
    const pid = doomed.service.child.pid;
    await doomed.service.lose();
    const lostAt = Date.now();
    const record = await answered(replica(1), id);
    const tookMs = Date.now() - lostAt;
    t.true(tookMs <= 45_000, `the record ended ${tookMs} ms after the replica died`);
    t.is(record.status, 'failure');
    t.deepEqual(record.answer, {
      status: 500,
      body: serviceError('BUILD_LOST', { replica: `${hostname()}:${String(pid)}` }).toBody(),
    });
  },
);

scenario(
  'a canary registry password is in no record, answer, Idempotency-Key or Redis value',
  async (t, { redis, replicas }) => {
    const replica = (i: number): Replica => replicas[i] as Replica;
    const canary = `CANARY-${randomBytes(12).toString('hex')}`;
    const body = {
      ...request(httpsRepo('image'), 'replicas-canary'),
      image: { registry: stack.REGISTRY_BASIC, name: uniqueName('replicas-canary') },
      registryCredentials: {
        registry: stack.REGISTRY_BASIC,
        username: stack.REGISTRY_BASIC_USER,
        password: canary,
      },
    };
    const key = `canary-${randomUUID()}`;
    const started = await startAsync(replica(0), body, { 'Idempotency-Key': key });
    t.is(started.status, 202);
    const again = await startAsync(replica(1), body, { 'Idempotency-Key': key });
    t.is(again.body.id, started.body.id);
    const record = await answered(replica(1), String(started.body.id));
    const seen = [
      JSON.stringify(started.body),
      JSON.stringify(again.body),
      JSON.stringify(record),
      JSON.stringify(await listBuilds(replica(0), '')),
      JSON.stringify(await listBuilds(replica(1), '')),
      await redis.dump(),
    ];
    t.true(seen[5]?.includes(idempotencyKey('').slice(0, -1)), 'the key is in Redis');
    for (const text of seen) t.false(text.includes(canary));
  },
);

const registerOn = (kind: RedisKind): void => {
  for (const [title, run] of scenarios)
    test.serial(`${kind}: ${title}`, async (t) => run(t, await replicasOn(kind)));
};
for (const kind of REDIS_KINDS) registerOn(kind);
