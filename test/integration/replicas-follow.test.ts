// Following across replicas: real service processes on a redis-server of the test's own, the stack's
// git server, builder and registry, build reuse on (the default). The same build sent to A and B at
// once runs the CLI once and both answer 200 with the same image; of the requests on B and C that
// wait for a slow build on A, one builds once A is SIGKILLed (A's lease expires) and the other waits
// for that build: both answer 200 with one image.
// "The CLI ran" is read from the img log (any replica reads any log): a build's log has the
// `devcontainer build` command line, a reuse's has none.
// On a redis-server and on a three-master Redis Cluster, with the same assertions.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { ownReplicas } from '../helpers/replica-sets.js';
import {
  getText,
  leftRunningList,
  listBuilds,
  postJson,
  replicaEnv,
  within,
  type JsonAnswer,
  type Replica,
} from '../helpers/replicas.js';
import { httpsCreds, stack, uniqueName } from '../helpers/build-support.js';
import { readImage, testRepo } from '../helpers/reuse-support.js';
import { metricValue } from '../helpers/metrics.js';

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;
const ranCli = (log: string): boolean => log.includes('devcontainer build');

/** A fresh repository whose Dockerfile runs `run` (a nonce keeps BuildKit from answering from its cache). */
async function repoWith(t: ExecutionContext, label: string, run: string) {
  const repo = await testRepo(label);
  t.teardown(repo.dispose);
  const nonce = randomBytes(6).toString('hex');
  const commit = await repo.commit({
    '.devcontainer/devcontainer.json': json({
      build: { dockerfile: 'Dockerfile' },
      remoteEnv: { IBS_TEST: label },
    }),
    '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo "${label} ${nonce}" && ${run}\n`,
  });
  return { repo, commit };
}

async function imgLog(t: ExecutionContext, r: Replica, answer: JsonAnswer): Promise<string> {
  const logId = String(answer.status === 200 ? answer.body.imageBuildLogId : answer.body.logId);
  const log = await getText(r, `/logs/${logId}`);
  if (answer.status !== 200)
    t.fail(`POST /build answered ${answer.status} ${JSON.stringify(answer.body)}\n${log.text}`);
  return log.text;
}

/** The digest of the answer's image, as GET /devcontainer on `r` reads it. */
async function digestOn(t: ExecutionContext, r: Replica, answer: JsonAnswer): Promise<string> {
  const { registry, name, tag } = answer.body;
  const query = new URLSearchParams({ registry: String(registry), name: String(name), tag: String(tag) });
  const res = await getText(r, `/devcontainer?${query.toString()}`);
  t.is(res.status, 200, res.text);
  return (JSON.parse(res.text) as { digest: string }).digest;
}

for (const kind of REDIS_KINDS) {
  test(`${kind}: the same build sent to A and B at once: one CLI run, two 200s, one image and digest`, async (t) => {
    const { replicas } = await ownReplicas(t, kind, ['A', 'B'], (redis) => replicaEnv(stack, redis));
    const [a, b] = replicas as [Replica, Replica];
    const { repo, commit } = await repoWith(t, 'follow-once', 'true');
    const name = uniqueName('follow-once');
    const body = {
      repository: repo.url,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    };

    const [onA, onB] = await Promise.all([postJson(a, '/build', body), postJson(b, '/build', body)]);
    // Each log read from the other replica.
    const logs = [await imgLog(t, b, onA), await imgLog(t, a, onB)];
    t.is(onA.status, 200);
    t.is(onB.status, 200);
    t.is(logs.filter(ranCli).length, 1, 'the CLI ran once across both replicas');
    const follower = logs.find((log) => !ranCli(log)) ?? '';
    t.regex(follower, /a build with the same key runs on another replica .*: waiting for it/);
    t.regex(follower, /reused, nothing to write/);

    t.is(onA.body.image, onB.body.image);
    t.is(onA.body.commit, commit);
    t.is(onB.body.commit, commit);
    // Each answer's image, looked up on the replica that gave it: one digest.
    const digests = [await digestOn(t, a, onA), await digestOn(t, b, onB)];
    t.regex(digests[0] ?? '', /^sha256:/);
    t.is(digests[0], digests[1]);

    const followed =
      (await metricValue(a.url, 'service_builds_coalesced_total')) +
      (await metricValue(b.url, 'service_builds_coalesced_total'));
    const reuses =
      (await metricValue(a.url, 'service_build_reuses_total')) +
      (await metricValue(b.url, 'service_build_reuses_total'));
    t.is(followed, 1);
    t.is(reuses, 1);
  });

  test(`${kind}: SIGKILL of A during a slow build: its build leaves the list once its lease expires; of the requests waiting on B and C one builds, the other waits for it; both answer 200 with one image`, async (t) => {
    const { replicas } = await ownReplicas(t, kind, ['A', 'B', 'C'], (redis) => replicaEnv(stack, redis));
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const { repo } = await repoWith(t, 'follow-kill', 'sleep 40');
    const name = uniqueName('follow-kill');
    const body = {
      repository: repo.url,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name },
    };
    const requestId = `follow-kill-${randomBytes(4).toString('hex')}`;

    const onA = fetch(`${a.url}/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Request-Id': requestId },
      body: JSON.stringify(body),
    }).then(
      (res) => res.status,
      () => 'connection lost',
    );
    // A builds (its img log is open: it holds the key's lease before the CLI starts).
    await within('A building', 180_000, async () => {
      const [running] = await listBuilds(b, `requestId=${requestId}&status=running`);
      return running?.phase === 'building';
    });

    // The identical request on B and on C waits for A's build (counted as a follow on each).
    const onB = postJson(b, '/build', body);
    const onC = postJson(c, '/build', body);
    await within('B and C followed A', 60_000, async () => {
      const [onBCount, onCCount] = await Promise.all([
        metricValue(b.url, 'service_builds_coalesced_total'),
        metricValue(c.url, 'service_builds_coalesced_total'),
      ]);
      return onBCount === 1 && onCCount === 1;
    });

    // A replica lost with its pod or node: the service and the commands it runs, all at once.
    await a.service.lose();
    const took = await leftRunningList([b, c], requestId);
    t.log(`A's build left the running list ${took} ms after the SIGKILL`);
    t.is(await onA, 'connection lost');

    const answers = [await onB, await onC];
    const logs = [await imgLog(t, c, answers[0] as JsonAnswer), await imgLog(t, b, answers[1] as JsonAnswer)];
    t.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200],
    );
    // One of them built (the first to hold the lease once A's expired), the other followed it.
    const builders = logs.filter(ranCli);
    t.is(builders.length, 1, logs.join('\n----\n'));
    const log = builders[0] ?? '';
    // The builder's log says why it built, and names the log of its wait for A.
    const waited = /^# waited in log (img-[\w-]+): .*its replica stopped renewing the lease: building$/m.exec(
      log,
    );
    t.truthy(waited, log);
    const wait = await getText(c, `/logs/${waited?.[1] ?? ''}`);
    t.regex(wait.text, /a build with the same key runs on another replica .*: waiting for it/);
    t.regex(wait.text, /its replica stopped renewing the lease: building/);
    t.false(ranCli(wait.text));
    // The other one waited for A, then for the builder, and reused its image.
    const follower = logs.find((text) => !ranCli(text)) ?? '';
    t.regex(follower, /its replica stopped renewing the lease: building/);
    t.regex(follower, /a build with the same key runs on another replica .*: waiting for it/);
    t.regex(follower, /: reused/);
    const [first, second] = answers as [JsonAnswer, JsonAnswer];
    t.is(first.body.commit, second.body.commit);
    t.is(await digestOn(t, b, first), await digestOn(t, c, second));
    const image = await readImage(stack.REGISTRY_ANON, name, String(first.body.tag));
    t.is(image?.labels['org.opencontainers.image.revision'], String(first.body.commit));
  });
}
