/**
 * Answered commits in Redis mode: the records one replica writes are the ones every replica
 * reads (a redis-server of the test's own). Two lease stores on two connections share them, keep
 * the newest few per request shape and forget on request; two real service processes answer an
 * unchanged commit built on the other with no clone. The key inputs of a repository's last build
 * are shared the same way (a build's `rebuiltBecause`), the secrets identity only as its digest.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import type { AnsweredCommit } from '../../workers/leases/answered-commits.js';
import { MAX_COMMITS_PER_SHAPE } from '../../workers/leases/answered-commits.js';
import { createRedisBuildLeases } from '../../workers/leases/redis-leases.js';
import { RecentInputs } from '../../workers/reuse/recent-inputs.js';
import { answeredKey, recentInputsKey } from '../../src/redis/keys.js';
import { stackEnv } from '../stack/env.js';
import {
  listBuilds,
  postJson,
  replicaEnv,
  startReplicas,
  stopReplicas,
  type Replica,
} from '../helpers/replicas.js';
import { readyConnection, useRedisServer } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';
import { testRepo } from '../helpers/reuse-support.js';

const redis = useRedisServer();
const stack = stackEnv();

const answer = (commit: string, answeredAt: number): AnsweredCommit => ({
  commit,
  branch: 'main',
  registry: 'registry.example',
  name: 'app',
  tag: `sha-${commit.slice(0, 7)}`,
  digest: `sha256:${'d'.repeat(64)}`,
  key: 'k'.repeat(64),
  movable: [{ ref: 'registry.example/base:1', digest: `sha256:${'b'.repeat(64)}`, what: 'base image' }],
  cliVersion: '0.0.0',
  buildProcessVersion: 1,
  answeredAt,
});

async function store(t: ExecutionContext) {
  const connection = await readyConnection(redis());
  const leases = createRedisBuildLeases({ connection, logger: silentLogger() });
  t.teardown(async () => {
    await leases.close();
    await connection.close();
  });
  return { answered: leases.answered, recent: new RecentInputs(leases.recent), connection };
}

test("one replica's last build inputs are what another compares with; no secrets identity in Redis", async (t) => {
  const a = await store(t);
  const b = await store(t);
  const id = `https://git.example/${randomBytes(8).toString('hex')}.git main`;
  const identity = `identity-${randomBytes(16).toString('hex')}`;
  const input = {
    configDigest: `sha256:${'c'.repeat(64)}`,
    paths: [{ path: '.devcontainer', kind: 'dir' as const, objectId: '1'.repeat(40) }],
    baseImages: [{ ref: 'registry.example/base:1', digest: `sha256:${'b'.repeat(64)}` }],
    features: [],
    platforms: [],
    cliVersion: '0.0.0',
    buildProcessVersion: 1,
    secretIds: ['token'],
    secretsIdentity: identity,
  };
  t.is(await b.recent.changes(id, input), undefined, 'nothing known yet');
  await a.recent.set(id, input);
  t.deepEqual(await b.recent.changes(id, input), [], 'the same inputs, the same identity: no change');
  const moved = {
    ...input,
    baseImages: [{ ref: 'registry.example/base:1', digest: `sha256:${'e'.repeat(64)}` }],
  };
  t.deepEqual(await b.recent.changes(id, moved), [
    {
      input: 'base image registry.example/base:1',
      before: `sha256:${'b'.repeat(64)}`,
      after: `sha256:${'e'.repeat(64)}`,
    },
  ]);
  t.deepEqual(await b.recent.changes(id, { ...input, secretsIdentity: 'another' }), [
    { input: 'build secrets' },
  ]);
  const keys = await a.connection.call((client) => client.keys(recentInputsKey('*')));
  const stored = await a.connection.call((client) => client.mget(...keys));
  t.true(keys.length > 0);
  t.false(stored.join('\n').includes(identity), 'the identity is kept as its digest only');
});

test('what one replica remembers the other reads; the newest few are kept; forget removes one', async (t) => {
  const a = await store(t);
  const b = await store(t);
  const shape = randomBytes(32).toString('hex');
  const first = answer('1'.repeat(40), 1000);
  await a.answered.set(shape, first);
  t.deepEqual([...(await b.answered.get(shape)).values()], [first]);

  for (let i = 0; i < MAX_COMMITS_PER_SHAPE + 3; i++)
    await b.answered.set(shape, answer(`${i}`.padStart(40, 'a'), 2000 + i));
  const kept = await a.answered.get(shape);
  t.is(kept.size, MAX_COMMITS_PER_SHAPE);
  t.false(kept.has(first.commit), 'the oldest went first');
  const newest = `${MAX_COMMITS_PER_SHAPE + 2}`.padStart(40, 'a');
  t.true(kept.has(newest));
  t.true((await a.connection.client.ttl(answeredKey(shape))) > 0, 'a shape not answered again expires');

  await a.answered.forget(shape, newest);
  t.false((await b.answered.get(shape)).has(newest));
});

test('replica B answers a commit built on A from the shared record: no clone', async (t) => {
  const server = redis();
  const replicas = await startReplicas(['A', 'B'], replicaEnv(stack, server.url));
  t.teardown(() => stopReplicas(replicas));
  const [a, b] = replicas as [Replica, Replica];
  const repo = await testRepo('answered-redis');
  t.teardown(repo.dispose);
  const commit = await repo.commit({
    '.devcontainer/devcontainer.json': JSON.stringify({
      image: stack.BASE_IMAGE_ANON,
      remoteEnv: { R: '1' },
    }),
  });
  const body = {
    repository: repo.url,
    gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
    image: { registry: stack.REGISTRY_ANON, name: `it/answered-redis-${randomBytes(4).toString('hex')}` },
  };
  const built = await postJson(a, '/build', body).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${a.service.stderr()}\n${a.service.stdout().slice(-3000)}`);
  });
  t.is(built.status, 200, JSON.stringify(built.body));
  const again = await postJson(b, '/build', body);
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.commit, commit);
  t.is(again.body.digest, built.body.digest);
  const img = await (await fetch(`${b.url}/logs/${String(again.body.imageBuildLogId)}`)).text();
  t.regex(img, /reused, no build, no clone/);
  const git = await (await fetch(`${b.url}/logs/${String(again.body.gitCloneLogId)}`)).text();
  t.regex(git, /nothing cloned/);
  t.false(git.includes('git clone'), git);
  const listed = await listBuilds(a, `repository=${encodeURIComponent(repo.url)}`);
  t.is(listed.length, 2);
  t.true(listed.every((record) => record.status === 'success' && record.commit === commit));
  // Only references and digests reach Redis: no credential.
  const connection = await readyConnection(server);
  t.teardown(() => connection.close());
  const keys = await connection.client.keys(answeredKey('*'));
  const stored = JSON.stringify(await Promise.all(keys.map((key) => connection.client.hgetall(key))));
  t.true(stored.includes(commit));
  t.false(stored.includes(stack.GIT_HTTPS_PASSWORD));
});
