/**
 * A rolling update under load, as a Deployment does it: three real service processes on one Redis
 * (a redis-server of the test's own) share a queue of some tens of async builds (real builds on
 * the stack's BuildKit); each replica in turn gets SIGTERM and a new process takes its place.
 * Every build ends exactly once with one image, none is lost, each stopped replica's readiness
 * fails before it exits, it exits 0, and no answer contradicts another. The builds carry no
 * credentials of their own (the replicas have the git server's as entries), except a few accepted
 * by the first replica right before its SIGTERM: only it holds their credentials, so they end with
 * that reason rather than wait for ever.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { httpsCreds, stack, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';
import { tagDigest } from '../helpers/prebuild-support.js';
import { startRedis, type RedisProcess } from '../helpers/redis-process.js';
import { queueFile } from '../helpers/replica-sets.js';
import { postAsync, replicaEnv, startReplicas, type Replica } from '../helpers/replicas.js';
import { SLOW_FIXTURE_DOCKERFILE } from '../stack/fixtures.js';

/** Builds queued before each replica's turn (three turns). */
const PER_TURN = 10;
const OWN_CREDENTIALS = 3;
const file = queueFile(stack, 'rolling');
let redis: RedisProcess;
/** Every replica ever started (the stopped ones too: their logs are read at the end). */
const everyReplica: Replica[] = [];
let env: Record<string, string>;

test.before(async () => {
  redis = await startRedis();
  env = replicaEnv(stack, redis.url, {
    MAX_CONCURRENT_BUILDS: '2',
    GIT_CREDENTIALS_CONFIG_PATH: file.credentials,
    SHUTDOWN_GRACE_SECONDS: '240',
  });
  everyReplica.push(...(await startReplicas(['a', 'b', 'c'], env)));
});

test.after.always(async () => {
  await Promise.all(everyReplica.map((r) => r.service.lose()));
  await redis?.dispose();
});

/** A repository of its own whose build runs a step of a few seconds (so builds are in flight). */
function repository(): string {
  return file.repository(SLOW_FIXTURE_DOCKERFILE(stack.BASE_IMAGE_ANON, randomBytes(8).toString('hex'), 3));
}

/** A build accepted, and the image name it pushes to (each build's own). */
interface Accepted {
  readonly id: string;
  readonly name: string;
}

/** An async build of a repository of its own, `body` its further fields. */
async function accept(replica: Replica, body: Record<string, unknown>): Promise<Accepted> {
  const name = uniqueName('rolling');
  const { id } = await postAsync(replica, repository(), { registry: stack.REGISTRY_ANON, name }, { body });
  return { id, name };
}

/** What a finished record answers, reduced to what must never change once said. */
const finalOf = (r: BuildRecord): string =>
  JSON.stringify({ status: r.status, image: r.image, error: r.error, answer: r.answer?.status });

/**
 * Reads every build on a live replica again and again until stopped: a record once finished must
 * answer the same ever after (contradictions are collected).
 */
function watchAnswers(ids: readonly string[], live: () => Replica[]): { stop: () => Promise<string[]> } {
  const said = new Map<string, string>();
  const contradictions: string[] = [];
  let running = true;
  const loop = (async () => {
    for (let round = 0; running; round += 1) {
      const replicas = live();
      const replica = replicas[round % replicas.length];
      if (replica === undefined) break;
      for (const id of ids) {
        const res = await fetch(`${replica.url}/builds/${id}`).catch(() => undefined);
        if (res?.status !== 200) continue;
        const record = (await res.json()) as BuildRecord;
        const before = said.get(id);
        if (record.phase !== 'finished') {
          if (before !== undefined)
            contradictions.push(`${id} finished, then ${record.phase} on ${replica.name}`);
          continue;
        }
        if (before === undefined) said.set(id, finalOf(record));
        else if (before !== finalOf(record)) contradictions.push(`${id}: ${before} then ${finalOf(record)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return contradictions;
    },
  };
}

/** How many times any replica, old or new, logged a build pushing to `name` (each build's own) as succeeded. */
const successes = (name: string): number =>
  everyReplica
    .flatMap((r) => r.service.lines())
    .filter(
      (l) => l.msg === 'build succeeded' && typeof l.image === 'string' && l.image.includes(`/${name}:`),
    ).length;

/**
 * SIGTERM to `old` as the Deployment sends it: readiness fails while the process still runs; it
 * exits 0. Answers whether readiness was seen failing before the exit.
 */
async function terminate(
  old: Replica,
): Promise<{ readyFalseBeforeExit: boolean; exitCode: number | string }> {
  old.service.child.kill('SIGTERM');
  let readyFalseBeforeExit = false;
  await eventually(
    async () => {
      const res = await fetch(`${old.url}/health/ready`).catch(() => undefined);
      if (old.service.child.exitCode !== null) return true;
      // Refused (the listener closed) or 503 (a connection still open): not ready, still running.
      readyFalseBeforeExit = res === undefined || res.status === 503;
      return readyFalseBeforeExit;
    },
    { timeout: 30_000, interval: 20, what: `replica ${old.name}'s readiness to fail` },
  );
  return { readyFalseBeforeExit, exitCode: await old.service.exited };
}

test('a rolling update of every replica under a queue of builds: each ends once with one image, none lost', async (t) => {
  const started = Date.now();
  const live = [...everyReplica];
  const [a] = live as [Replica];
  const shareable: Accepted[] = [];
  const watched: string[] = [];
  const watcher = watchAnswers(watched, () => live);
  const exits: Record<string, { readyFalseBeforeExit: boolean; exitCode: number | string }> = {};
  const held: Accepted[] = [];
  for (const name of ['a', 'b', 'c']) {
    const old = live.find((r) => r.name === name) as Replica;
    // A queue deeper than the replicas' slots, accepted by the replica about to stop.
    for (let i = 0; i < PER_TURN; i += 1) shareable.push(await accept(old, {}));
    watched.splice(0, watched.length, ...shareable.map((r) => r.id));
    // Builds running on it when the signal comes: its grace lets them finish.
    await eventually(async () => (await metricValue(old.url, 'service_builds_in_flight')) > 0, {
      timeout: 120_000,
      interval: 100,
      what: `replica ${name} to run a build`,
    });
    if (name === 'a') {
      // Behind the queue: the credentials of their request are on `a` alone.
      for (let i = 0; i < OWN_CREDENTIALS; i += 1)
        held.push(await accept(a, { gitCredentials: httpsCreds() }));
    }
    exits[name] = await terminate(old);
    t.log(`replica ${name} stopped ${String(Math.round((Date.now() - started) / 1000))} s in`);
    const [replacement] = await startReplicas([`${name}2`], env);
    everyReplica.push(replacement as Replica);
    live.splice(live.indexOf(old), 1, replacement as Replica);
    t.true(
      old.service.lines().some((l) => l.msg === 'build succeeded'),
      `replica ${name} finished builds it ran`,
    );
  }
  t.deepEqual(
    exits,
    Object.fromEntries(['a', 'b', 'c'].map((n) => [n, { readyFalseBeforeExit: true, exitCode: 0 }])),
    'each replica: readiness failed first, then exit 0',
  );

  const byId = new Map<string, BuildRecord>();
  const all = [...shareable, ...held];
  await eventually(
    async () => {
      for (const { id } of all) {
        if (byId.has(id)) continue;
        const record = (await (
          await fetch(`${(live[0] as Replica).url}/builds/${id}`)
        ).json()) as BuildRecord;
        if (record.phase === 'finished') byId.set(id, record);
      }
      return byId.size === all.length;
    },
    { timeout: 240_000, interval: 500, what: 'every build to end' },
  );
  t.log(`${String(all.length)} builds ended ${String(Math.round((Date.now() - started) / 1000))} s in`);
  const contradictions = await watcher.stop();
  t.deepEqual(contradictions, [], 'no answer contradicts another');

  for (const { id, name } of shareable) {
    const record = byId.get(id) as BuildRecord;
    t.is(record.status, 'success', `${id}: ${record.error ?? ''}`);
    const body = (record.answer?.body ?? {}) as Record<string, string>;
    t.is(successes(name), 1, `${id} ran to its end exactly once`);
    t.is(body.name, name);
    const served = await tagDigest(body.registry ?? '', body.name ?? '', body.tag ?? '');
    t.truthy(body.digest);
    t.is(served, body.digest, `${id}: the tag serves the one image its answer names`);
  }
  for (const { id, name } of held) {
    const record = byId.get(id) as BuildRecord;
    t.is(record.status, 'failure');
    t.is(record.answer?.status, 503);
    t.regex(record.error ?? '', /its replica stopped, and the credentials of its request were only there/);
    t.is(successes(name), 0);
  }
});
