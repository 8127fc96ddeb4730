// The pages of the Redis build registry against a real redis-server (one per test): the promises
// every registry keeps (the shared suite), then what only Redis mode adds: every key under one
// hash tag, index entries leaving with their records, and changes heard across replicas.
import test from 'ava';
import { createRedisBuildRegistry, type RedisBuildRegistry } from '../../src/builds/redis-registry.js';
import type { RedisConnection } from '../../src/redis/connection.js';
import { buildPagesSuite } from '../helpers/build-pages-suite.js';
import { eventually } from '../helpers/eventually.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { readyConnection } from '../helpers/redis-test-server.js';
import { silentLogger } from '../helpers/silent-logger.js';

type Teardown = { teardown: (fn: () => Promise<void> | void) => void };

async function server(t: Teardown): Promise<RedisProcess> {
  const started = await startRedis();
  t.teardown(() => started.dispose());
  return started;
}

async function replica(
  t: Teardown,
  on: RedisProcess,
  options: { history: number; historyDays?: number; now?: () => number },
): Promise<{ registry: RedisBuildRegistry; connection: RedisConnection }> {
  const connection = await readyConnection(on);
  const registry = createRedisBuildRegistry({
    connection,
    history: options.history,
    historyDays: options.historyDays ?? 30,
    logger: silentLogger(),
    replica: 'test-replica',
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  t.teardown(async () => {
    registry.close();
    await connection.close();
  });
  return { registry, connection };
}

buildPagesSuite('redis', async (t, options) => {
  let now = Date.now();
  const { registry } = await replica(t, await server(t), { ...options, now: () => now });
  return { registry, advance: (ms) => (now += ms) };
});

const newBuild = (n: number) => ({
  requestId: `req-${n}`,
  repository: `https://git.example/team-${n % 2}/app.git`,
  branch: 'main',
  image: 'registry.example/app',
});

test('every key of the records shares the {builds} hash tag; leaving the history drops their index entries', async (t) => {
  const on = await server(t);
  const { registry, connection } = await replica(t, on, { history: 2 });
  const ids: string[] = [];
  for (let n = 0; n < 6; n++) ids.push(await registry.start(newBuild(n)));
  await registry.update(ids[0] as string, { gitCloneLogId: 'git-0', imageBuildLogId: 'img-0' });
  for (const id of ids) await registry.finish(id, { status: 'success', durationSeconds: 1 });
  const keys = (await connection.client.keys('*')).sort();
  t.true(keys.length > 0);
  t.deepEqual(
    keys.filter((key) => !key.startsWith('ibs:{builds}:')),
    [],
  );
  // Two records kept; every index holds only them.
  const records = keys.filter((key) => /^ibs:\{builds\}:build:/.test(key));
  t.deepEqual(records.sort(), [`ibs:{builds}:build:${ids[4]}`, `ibs:{builds}:build:${ids[5]}`].sort());
  for (const key of keys.filter((k) => k.startsWith('ibs:{builds}:index:'))) {
    const members = (await connection.client.zrange(key, '0', '-1')).sort();
    t.true(
      members.every((id) => id === ids[4] || id === ids[5]),
      key,
    );
  }
  t.false(keys.includes('ibs:{builds}:log-owner:git-0'), 'the log owner left with its record');
  // A finished record's key expires on its own as well (historyDays and a day); a cancel asked
  // for it afterwards changes nothing.
  await registry.requestCancel(ids[5] as string, 'late');
  const ttl = await connection.client.pttl(`ibs:{builds}:build:${ids[5]}`);
  t.true(ttl > 30 * 24 * 3600 * 1000 && ttl <= 31 * 24 * 3600 * 1000, String(ttl));
});

test('an index entry whose record expired is dropped when a page reads it', async (t) => {
  const on = await server(t);
  const { registry, connection } = await replica(t, on, { history: 10 });
  const kept = await registry.start(newBuild(0));
  const gone = await registry.start(newBuild(1));
  await registry.finish(gone, { status: 'success', durationSeconds: 1 });
  await connection.client.del(`ibs:{builds}:build:${gone}`);
  const page = await registry.list({ branch: 'main' }, { limit: 10 });
  t.deepEqual(
    page.builds.map((b) => b.id),
    [kept],
  );
  t.deepEqual(await connection.client.zrange('ibs:{builds}:index:branch:main', '0', '-1'), [kept]);
});

test('a change on one replica is heard on another', async (t) => {
  const on = await server(t);
  const a = await replica(t, on, { history: 10 });
  const b = await replica(t, on, { history: 10 });
  const heard: string[] = [];
  const stop = await b.registry.watchChanges((change) => heard.push(`${change.id} ${change.repository}`));
  t.teardown(stop);
  const id = await a.registry.start(newBuild(1));
  await a.registry.finish(id, { status: 'failure', durationSeconds: 1 });
  await eventually(() => heard.length >= 2, { what: 'both changes heard on the other replica' });
  t.deepEqual(heard, [`${id} ${newBuild(1).repository}`, `${id} ${newBuild(1).repository}`]);
});
