/**
 * Stage 1 of the flow (build-flow.ts) with the real queue, in-flight map and build records, a fake
 * job (no git, no CLI) and a fake branch-tip check: who runs, who follows, and when a build is
 * cancelled.
 */
import test from 'ava';
import pino from 'pino';
import { Metrics } from '../../../src/observability/metrics.js';
import type { BuildDeps } from '../../../workers/job/build-deps.js';
import type { BuildResult } from '../../../workers/plan/plan-types.js';
import { createBuildQueue } from '../../../workers/queue/slots.js';
import type { FollowedOutcome } from '../../../workers/leases/leases.js';
import type { JobOutcome } from '../../../workers/reuse/decision.js';
import { runFlow } from '../../../workers/flow/build-flow.js';
import type { BuildJobRunner } from '../../../workers/build-worker.js';
import type { BuilderFleet } from '../../../workers/builder/fleet/fleet.js';
import { BuildResource } from '../../../workers/flow/build-resource.js';
import type { JobReuse } from '../../../workers/job/job.js';
import { createMemoryBuildRegistry } from '../../../src/builds/memory-registry.js';
import { createInProcessInFlight } from '../../../workers/reuse/in-flight.js';
import { RecentInputs } from '../../../workers/reuse/recent-inputs.js';
import { eventually } from '../../helpers/eventually.js';
import { PLAN } from '../../helpers/fake-build.js';

const COMMIT = 'a'.repeat(40);
const plan = PLAN;

const result = (commit: string): BuildResult => ({
  image: `r.example/app:sha-${commit.slice(0, 7)}`,
  registry: 'r.example',
  name: 'app',
  tag: `sha-${commit.slice(0, 7)}`,
  branch: 'main',
  commit,
  gitCloneLogId: 'git-1',
  imageBuildLogId: 'img-1',
  digest: `sha256:${'d'.repeat(64)}`,
});

type FakeJob = (signal: AbortSignal, reuse?: JobReuse) => Promise<JobOutcome>;

function harness(options: { tips: () => Promise<string[]>; maxConcurrent?: number; reuse?: boolean }) {
  const metrics = new Metrics();
  const signals: AbortSignal[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let runs = 0;
  const job: FakeJob = async (signal, reuse) => {
    runs += 1;
    signals.push(signal);
    reuse?.own.setCommit(COMMIT);
    await Promise.race([gate, new Promise((resolve) => signal.addEventListener('abort', resolve))]);
    if (signal.aborted) throw new Error('cancelled');
    return result(COMMIT);
  };
  const logger = pino({ enabled: false });
  const deps = {
    config: { build: { reuse: options.reuse ?? true, cloneTimeoutSeconds: 0, timeoutSeconds: 0 } },
    metrics,
    logger,
    secretIdentityKey: async () => Buffer.alloc(32),
    reuse: { inFlight: createInProcessInFlight<BuildResult>(), recent: new RecentInputs() },
  } as unknown as BuildDeps;
  const builds = createMemoryBuildRegistry({ history: 50 });
  const queue = createBuildQueue({
    maxConcurrent: options.maxConcurrent ?? 4,
    shutdownSignal: new AbortController().signal,
  });
  const fleet = { refuse: () => undefined, place: () => undefined } as unknown as BuilderFleet;
  /** One request through the flow, its job `run` (default: the gated one). */
  const admit = (clientSignal: AbortSignal, run: FakeJob = job): Promise<BuildResult> => {
    const runJob = ((_plan, _deps, signal, _reporter, reuse) => run(signal, reuse)) as BuildJobRunner;
    return runFlow({
      plan,
      submission: { requestId: 'r', logger, signal: clientSignal },
      resource: new BuildResource(builds, logger, []),
      parts: { deps, queue, fleet, builds, runJob, remoteTip: options.tips },
    });
  };
  const followed = async () => (await metrics.buildFollowsTotal.get()).values[0]?.value ?? 0;
  /** Until `n` requests have each started a job or followed one in flight. */
  const decided = (n: number) =>
    eventually(async () => runs + (await followed()) >= n, { what: `${n} requests to run or follow` });
  return { admit, release, runs: () => runs, signals, followed, decided };
}

test('5 identical requests with a limit of 4: one job, five answers, 4 followed', async (t) => {
  const h = harness({ tips: async () => [COMMIT] });
  const answers = Array.from({ length: 5 }, () => h.admit(new AbortController().signal));
  await h.decided(5);
  h.release();
  const results = await Promise.all(answers);
  t.is(h.runs(), 1);
  t.deepEqual(new Set(results.map((r) => r.image)).size, 1);
  t.is(await h.followed(), 4);
});

test('a branch that moved on, or a tip that cannot be checked, means not followed early', async (t) => {
  for (const tips of [
    async () => ['b'.repeat(40)],
    async (): Promise<string[]> => Promise.reject(new Error('offline')),
  ]) {
    const h = harness({ tips });
    const first = h.admit(new AbortController().signal);
    const second = h.admit(new AbortController().signal);
    await h.decided(2);
    h.release();
    await Promise.all([first, second]);
    t.is(h.runs(), 2);
    t.is(await h.followed(), 0);
  }
});

test('reuse off: identical requests each run their job', async (t) => {
  const h = harness({ tips: async () => [COMMIT], reuse: false });
  const answers = [1, 2].map(() => h.admit(new AbortController().signal));
  await h.decided(2);
  h.release();
  await Promise.all(answers);
  t.is(h.runs(), 2);
});

test('a followed build is cancelled only when its last waiter has gone', async (t) => {
  const h = harness({ tips: async () => [COMMIT] });
  const leader = new AbortController();
  const follower = new AbortController();
  const a = h.admit(leader.signal);
  const b = h.admit(follower.signal);
  a.catch(() => undefined);
  b.catch(() => undefined);
  await h.decided(2);
  // How many waiters had left when the build was aborted: it must be both.
  let left = 0;
  const leftWhenAborted: number[] = [];
  h.signals[0]?.addEventListener('abort', () => leftWhenAborted.push(left));
  left = 1;
  leader.abort();
  // One turn of the event loop: every reaction to the leader leaving has run (no timer involved).
  await new Promise((resolve) => setImmediate(resolve));
  t.false(h.signals[0]?.aborted, 'the follower still waits: the build goes on');
  left = 2;
  follower.abort();
  await t.throwsAsync(b);
  t.true(h.signals[0]?.aborted);
  t.deepEqual(leftWhenAborted, [2]);
  t.is(h.runs(), 1);
});

/**
 * Every job finds a build with the same key to wait for (while it may), and every such build ends
 * with `outcome`: the calls' followAllowed and notes, and the lines written to the wait logs.
 */
async function followedEach(outcome: FollowedOutcome) {
  const h = harness({ tips: async () => [COMMIT] });
  const calls: { followAllowed: boolean; note: string | undefined }[] = [];
  const lines: string[] = [];
  const job: FakeJob = async (_signal, reuse) => {
    calls.push({ followAllowed: reuse?.followAllowed ?? false, note: reuse?.note });
    if (reuse?.followAllowed !== true) return result(COMMIT);
    return {
      kind: 'wait',
      followed: { where: 'another replica', wait: async () => outcome },
      keyed: { key: 'k'.repeat(64), input: {} },
      soFar: { ...result(COMMIT), imageBuildLogId: undefined },
      log: {
        id: `img-wait-${calls.length}`,
        write: (text: string) => void lines.push(text),
        addSecrets: () => undefined,
        close: async () => undefined,
      },
    } as unknown as JobOutcome;
  };
  const answer = await h.admit(new AbortController().signal, job);
  return { answer, calls, lines };
}

test('a followed build whose replica died: the request builds, waiting once more for a build another waiter started first, never a third time', async (t) => {
  const why = 'its replica stopped renewing the lease';
  const { answer, calls, lines } = await followedEach({ ok: false, why, lost: true });
  t.deepEqual(answer, result(COMMIT));
  t.deepEqual(
    calls.map((call) => call.followAllowed),
    [true, true, false],
  );
  // Each job after a wait starts its log with why it builds, naming the log of that wait.
  t.deepEqual(
    calls.map((call) => call.note),
    [
      undefined,
      `# waited in log img-wait-1: ${why}: building\n`,
      `# waited in log img-wait-2: ${why}: building\n`,
    ],
  );
  t.deepEqual(lines, [`# ${why}: building\n`, `# ${why}: building\n`]);
});

test('a followed build that failed: the request builds at once, without waiting for another', async (t) => {
  const why = 'the build with the same key failed on its replica';
  const { answer, calls } = await followedEach({ ok: false, why });
  t.deepEqual(answer, result(COMMIT));
  t.deepEqual(
    calls.map((call) => [call.followAllowed, call.note]),
    [
      [true, undefined],
      [false, `# waited in log img-wait-1: ${why}: building\n`],
    ],
  );
});
