// Two real service processes on a real three-master Redis Cluster (redis.clusterNodes, the password
// from a file): a build accepted by one replica is listed and read, with its logs, from the other;
// a DELETE on one is a 404 on both; async builds queued on one run exactly once; the password is
// never in /config, argv or a log line. The same flows on one server: replicas-*.test.ts.
import test from 'ava';
import { stackEnv } from '../stack/env.js';
import { eventually } from '../helpers/eventually.js';
import { startRedisCluster } from '../helpers/redis-cluster-process.js';
import { fileReplicas } from '../helpers/replica-sets.js';
import { getText, listBuilds, postJson, replicaEnv, type Replica } from '../helpers/replicas.js';

const stack = stackEnv();
const replicasOn = fileReplicas(startRedisCluster, ['A', 'B'], (cluster) =>
  replicaEnv(stack, '', {
    REDIS_CLUSTER_NODES: cluster.nodes.join(','),
    REDIS_PASSWORD_FILE: cluster.passwordFile,
    MAX_CONCURRENT_BUILDS: '1',
  }),
);

const replica = (i: number): Replica => {
  const r = replicasOn().replicas[i];
  if (!r) throw new Error(`no replica ${i}`);
  return r;
};

const request = (name: string) => ({
  repository: `${stack.GIT_HTTPS_URL}/feature.git`,
  gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
  image: { registry: stack.REGISTRY_ANON, name: `it/${name}-${Date.now()}` },
});

test.serial(
  'a build answered by A is listed and read from B, its logs too; a DELETE on B is a 404 on A',
  async (t) => {
    const [a, b] = [replica(0), replica(1)];
    const res = await postJson(a, '/build', request('cluster-sync'));
    t.is(res.status, 200, JSON.stringify(res.body));
    // The answer names its logs; the record on B is found by them.
    const record = (await listBuilds(b, '')).find((r) => r.gitCloneLogId === res.body.gitCloneLogId);
    t.is(record?.status, 'success');
    t.is(record?.image, String(res.body.image));
    t.is((await getText(b, `/builds/${record?.id ?? ''}`)).status, 200);
    const ids = [res.body.gitCloneLogId, res.body.imageBuildLogId].map(String);
    for (const id of ids) {
      const [onA, onB] = [await getText(a, `/logs/${id}`), await getText(b, `/logs/${id}`)];
      t.is(onB.status, 200, id);
      t.is(onB.text, onA.text, `${id}: the same text on both`);
    }
    t.true((await getText(b, `/logs/${ids[1] ?? ''}`)).text.includes('devcontainer build'));
    for (const id of ids) t.is((await getText(b, `/logs/${id}`, { method: 'DELETE' })).status, 204);
    for (const id of ids) t.is((await getText(a, `/logs/${id}`)).status, 404);
  },
);

test.serial(
  'async builds queued on A and B each run exactly once, on one replica or the other',
  async (t) => {
    const [a, b] = [replica(0), replica(1)];
    const accepted = await Promise.all(
      [a, b, a, b].map(async (r, i) => {
        const res = await fetch(`${r.url}/build`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', Prefer: 'respond-async' },
          body: JSON.stringify(request(`cluster-async-${i}`)),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
    for (const res of accepted) t.is(res.status, 202, JSON.stringify(res.body));
    const ids = accepted.map((res) => String(res.body.id));
    const finished = await eventually(
      async () => {
        const records = await listBuilds(b, '');
        const mine = records.filter((record) => ids.includes(record.id));
        return mine.length === ids.length && mine.every((record) => record.status === 'success') && mine;
      },
      { timeout: 240_000, interval: 500, what: 'the queued builds to succeed' },
    );
    t.is(finished.length, 4);
    t.deepEqual(new Set(finished.map((record) => record.id)).size, 4);
  },
);

test.serial('/config names the nodes, never the password; no log line or argv holds it', async (t) => {
  const [a, b] = [replica(0), replica(1)];
  const { password, nodes } = replicasOn().redis;
  const config = await getText(a, '/config');
  t.is(config.status, 200);
  t.deepEqual((JSON.parse(config.text) as { redis: unknown }).redis, { configured: true, nodes, tls: false });
  for (const r of [a, b]) {
    t.false(config.text.includes(password));
    t.false(r.service.stdout().includes(password), `${r.name}: its log`);
    t.false(r.service.stderr().includes(password), `${r.name}: its stderr`);
  }
});
