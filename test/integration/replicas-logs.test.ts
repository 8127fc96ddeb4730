// Three real service processes sharing a Redis of the test's own: command logs written by one
// replica are read and deleted through the others; retention holds across replicas. On a
// redis-server and on a three-master Redis Cluster, with the same assertions.
import test from 'ava';
import { stackEnv } from '../stack/env.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { ownReplicas, replicaSets } from '../helpers/replica-sets.js';
import type { ReplicaRedis } from '../helpers/replica-redis.js';
import {
  getText,
  postJson,
  replicaEnv,
  startReplicas,
  stopReplicas,
  type Replica,
} from '../helpers/replicas.js';

const stack = stackEnv();
const replicasOn = replicaSets(['A', 'B', 'C'], (redis) => replicaEnv(stack, redis));

for (const kind of REDIS_KINDS) {
  test.serial(
    `${kind}: a build answered by A: its log ids are read from B and C; a DELETE on C makes them 404 on A`,
    async (t) => {
      const [a, b, c] = (await replicasOn(kind)).replicas as [Replica, Replica, Replica];
      const res = await postJson(a, '/build', {
        repository: `${stack.GIT_HTTPS_URL}/feature.git`,
        gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
        image: { registry: stack.REGISTRY_ANON, name: `it/replicas-${Date.now()}` },
      });
      t.is(res.status, 200, JSON.stringify(res.body));
      const ids = [res.body.gitCloneLogId, res.body.imageBuildLogId].map(String);
      t.regex(ids[0] ?? '', /^git-/);
      t.regex(ids[1] ?? '', /^img-/);
      const fromA = await Promise.all(ids.map((id) => getText(a, `/logs/${id}`)));
      t.true(fromA[0]?.text.includes('git clone'));
      t.true(fromA[1]?.text.includes('devcontainer build'));
      for (const other of [b, c]) {
        for (const [i, id] of ids.entries()) {
          const log = await getText(other, `/logs/${id}`);
          t.is(log.status, 200, `${other.name} ${id}`);
          t.is(log.text, fromA[i]?.text ?? '', `${other.name} reads the same text`);
        }
      }
      // The git credential reached no log.
      for (const log of fromA) t.false(log.text.includes(stack.GIT_HTTPS_PASSWORD));

      for (const id of ids) t.is((await getText(c, `/logs/${id}`, { method: 'DELETE' })).status, 204);
      for (const id of ids) {
        for (const other of [a, b]) {
          const gone = await getText(other, `/logs/${id}`);
          t.is(gone.status, 404, `${other.name} ${id}`);
          t.deepEqual(JSON.parse(gone.text), { error: 'log not found', logId: id });
        }
      }
    },
  );

  test.serial(
    `${kind}: retention holds across replicas, and the logs survive a restart of every replica`,
    async (t) => {
      // Replicas of their own with retention 2, on a Redis of their own (the other test's logs would count).
      const envOf = (redis: ReplicaRedis) => replicaEnv(stack, redis, { COMMAND_LOG_RETENTION: '2' });
      const set = await ownReplicas(t, kind, ['D', 'E', 'F'], envOf);
      const own = set.replicas;
      // A clone that fails fast (no such repository) writes one git log and answers 500 naming it.
      const ids: string[] = [];
      for (const r of [own[0], own[1], own[2], own[0]]) {
        if (!r) throw new Error('replica missing');
        const res = await postJson(r, '/build', {
          repository: `${stack.GIT_HTTPS_URL}/no-such-repo-${ids.length}.git`,
          gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
          image: { registry: stack.REGISTRY_ANON, name: 'it/retention' },
        });
        t.is(res.status, 500, JSON.stringify(res.body));
        ids.push(String(res.body.logId));
      }
      for (const r of own) {
        const statuses = await Promise.all(ids.map(async (id) => (await getText(r, `/logs/${id}`)).status));
        t.deepEqual(statuses, [404, 404, 200, 200], r.name);
      }

      // Logs survive a replica restart: every replica killed, a new one reads them (nothing wiped at start-up).
      await stopReplicas(own);
      const [fresh] = await startReplicas(['G'], envOf(set.redis));
      if (!fresh) throw new Error('replica missing');
      set.more.push(fresh);
      const after = await Promise.all(ids.map(async (id) => (await getText(fresh, `/logs/${id}`)).status));
      t.deepEqual(after, [404, 404, 200, 200], 'after the restart');
    },
  );
}
