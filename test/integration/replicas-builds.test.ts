// Three real service processes on a redis-server of the test's own and the stack's builder: a slow
// build on A is listed by GET /builds on B and C, its log followed on B streams the output before
// the build ends; SIGKILL of A: once its lease expires its build leaves the running list of the others.
// On a redis-server and on a three-master Redis Cluster, with the same assertions.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { BuildRecord } from '../../src/builds/types.js';
import { stackEnv } from '../stack/env.js';
import { SLOW_STEP_STARTED } from '../stack/fixtures.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { ownReplicas } from '../helpers/replica-sets.js';
import { leftRunningList, listBuilds, replicaEnv, within, type Replica } from '../helpers/replicas.js';

const stack = stackEnv();

for (const kind of REDIS_KINDS) {
  test(`${kind}: GET /builds on any replica lists the builds of all; a log followed on B streams A’s build; SIGKILL of A: gone once its lease expires`, async (t) => {
    const { replicas } = await ownReplicas(t, kind, ['A', 'B', 'C'], (redis) => replicaEnv(stack, redis));
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const requestId = `replicas-${randomBytes(4).toString('hex')}`;

    let answered = false;
    const answer = fetch(`${a.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Request-Id': requestId },
      body: JSON.stringify({
        repository: `${stack.GIT_HTTPS_URL}/slow.git`,
        gitCredentials: { username: stack.GIT_HTTPS_USER, token: stack.GIT_HTTPS_PASSWORD },
        image: { registry: stack.REGISTRY_ANON, name: `it/replicas-slow-${requestId}` },
        buildOptions: { noCache: true },
      }),
    }).then(
      (res) => {
        answered = true;
        return res.status;
      },
      () => 'connection lost',
    );

    // B and C list A's build (watched from B until its build log exists).
    let running: BuildRecord | undefined;
    // (The img log is opened, and listed, a moment before the build phase is reported.)
    await within('the build log and the building phase listed on B', 180_000, async () => {
      [running] = await listBuilds(b, `requestId=${requestId}&status=running`);
      return running?.imageBuildLogId !== undefined && running.phase === 'building';
    });
    const [onC] = await listBuilds(c, `requestId=${requestId}`);
    t.like(onC, { id: running?.id, phase: 'building', repository: `${stack.GIT_HTTPS_URL}/slow.git` });
    t.false(JSON.stringify(onC).includes(stack.GIT_HTTPS_PASSWORD));

    // Followed on B while A builds: the RUN step's line arrives before A answers.
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const res = await fetch(`${b.url}/logs/${running?.imageBuildLogId}?follow=true`, {
      signal: abort.signal,
    });
    t.is(res.status, 200);
    let streamed = '';
    const reader = res.body?.getReader();
    while (!streamed.includes(SLOW_STEP_STARTED)) {
      const next = await reader?.read();
      if (!next || next.done) break;
      streamed += Buffer.from(next.value).toString('utf8');
    }
    t.true(streamed.includes(SLOW_STEP_STARTED));
    t.false(answered, 'the output reached the follower on B while A still built');
    abort.abort();

    // SIGKILL of A: its build leaves the running list of B and C once its 15 s lease expires.
    // A replica lost with its pod or node: the service and the commands it runs, all at once.
    await a.service.lose();
    const took = await leftRunningList([b, c], requestId);
    t.log(`gone ${took} ms after the SIGKILL`);
    t.is(await answer, 'connection lost');
  });
}
