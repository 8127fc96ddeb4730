/**
 * A refresh storm on real replicas (docs/prebuilds.md, docs/queue.md), for bench/storm.ts: the
 * storm's repositories are built `FROM` a base image of the run's own, the reconcile builds each,
 * a refresh pass records their digests, then the base moves (its tag points at a second build) and
 * the next refresh pass queues every repository again (trigger `refresh`), a CI build of another
 * tenant arriving in the middle. The parts are those of the reconcile storm (test/helpers/storm.ts).
 */
import type { BuildRecord } from '../../src/builds/types.js';
import { ownDockerfileRepo, stack } from './build-support.js';
import { eventually } from './eventually.js';
import { metricValue } from './metrics.js';
import {
  listBuilds,
  postJson,
  replicaEnv,
  serverGitCredentials,
  startReplicas,
  stopReplicas,
} from './replicas.js';
import type { Replica } from './replicas.js';
import {
  ciInTheMiddle,
  finishedRecord,
  linesOf,
  ranTwiceOf,
  skippedOf,
  stormOn,
  timeOf,
  usedMemory,
  type Running,
  type StormFigures,
  type StormOptions,
  type StormSetup,
  type StormStart,
} from './storm.js';

export interface RefreshStormFigures extends StormFigures {
  /** The refresh pass that saw the base move: from its start to its end. */
  readonly passMs: number;
  /** From the base's move to that pass's start (the refresh interval's wait). */
  readonly moveToPassMs: number;
  /** The reconcile before it: from the replicas' start until every repository's first build ended. */
  readonly reconciledMs: number;
}

/** A refresh pass, from its `schedules: pass done` line: when it started and ended. */
interface Pass {
  readonly start: number;
  readonly done: number;
}

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** Runs the refresh storm and gives its figures; everything it made is removed before it resolves. */
export function runRefreshStorm(options: StormOptions): Promise<RefreshStormFigures> {
  let base = '';
  const prepare = async (start: StormStart): Promise<StormSetup> => {
    base = `it/storm-${start.run}/base`;
    await publishBases(start, base);
    // Long enough that a pass ends well before the next starts: the base moves between two passes.
    const interval = Math.max(30, Math.ceil(options.repositories / 20));
    return {
      from: `${stack.REGISTRY_ANON}/${base}:1`,
      configuration: { refreshOnBaseChange: true },
      env: { PREBUILD_REFRESH_INTERVAL_SECONDS: String(interval) },
    };
  };
  return stormOn(options, prepare, (storm) => measureRefresh(storm, base));
}

/**
 * The base, built twice through a replica of its own (synchronous POST /build): `<base>:1` (v1),
 * what the storm's repositories start from, and `<base>:2` (v2), where `:1` moves later.
 */
async function publishBases(start: StormStart, base: string): Promise<void> {
  const env = {
    MAX_CONCURRENT_BUILDS: '1',
    GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, start.dir),
  };
  const [publisher] = (await startReplicas(['base'], replicaEnv(stack, start.redis, env))) as [Replica];
  try {
    for (const version of ['1', '2']) {
      const repo = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nRUN echo v${version}-${start.run}\n`);
      start.cleanups.push(repo.remove);
      const answer = await postJson(publisher, '/build', {
        repository: repo.repository,
        image: { registry: stack.REGISTRY_ANON, name: base, tag: version },
      });
      if (answer.status !== 200)
        throw new Error(`the base v${version} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
  } finally {
    await stopReplicas([publisher]);
  }
}

/** Moves `<base>:1` to the manifest of `<base>:2` (one registry write); resolves with the moment it did. */
async function moveBase(base: string): Promise<number> {
  const registry = `http://${stack.REGISTRY_ANON}/v2/${base}/manifests`;
  const v2 = await fetch(`${registry}/2`, { headers: { accept: MANIFEST_TYPES } });
  if (v2.status !== 200) throw new Error(`GET ${base}:2 answered ${v2.status}`);
  const type = v2.headers.get('content-type') ?? '';
  const put = await fetch(`${registry}/1`, {
    method: 'PUT',
    headers: { 'content-type': type },
    body: Buffer.from(await v2.arrayBuffer()),
  });
  if (put.status !== 201) throw new Error(`PUT ${base}:1 answered ${put.status}: ${await put.text()}`);
  return Date.now();
}

/** The refresh passes the replicas' logs tell of, in the order they ended. */
function refreshPasses(replicas: readonly Replica[]): Pass[] {
  return linesOf(replicas, 'schedules: pass done')
    .filter((l) => l.pass === 'refresh')
    .map((l) => ({ start: timeOf(l) - Number(l.durationMs), done: timeOf(l) }))
    .sort((a, b) => a.done - b.done);
}

/** The first refresh pass that starts at `after` or later, once it ended. */
function passAfter(storm: Running, after: number, what: string): Promise<Pass> {
  return eventually(() => refreshPasses(storm.replicas).find((p) => p.start >= after), {
    timeout: storm.timeoutMs,
    interval: 100,
    what,
  });
}

/**
 * Waits until the reconcile built every repository once (it must, for a refresh to rebuild it);
 * resolves with the moment it saw the last one end.
 */
async function reconciled(storm: Running): Promise<number> {
  const front = storm.replicas[0] as Replica;
  const ofRun = (records: readonly BuildRecord[]) => records.filter((r) => r.image.includes(storm.run));
  const unfinished = async () =>
    ofRun([
      ...(await listBuilds(front, 'trigger=reconcile&status=queued')),
      ...(await listBuilds(front, 'trigger=reconcile&status=running')),
    ]).length;
  await eventually(
    () => linesOf(storm.replicas, 'schedules: pass done').some((l) => l.pass === 'reconcile'),
    {
      timeout: storm.timeoutMs,
      interval: 500,
      what: 'the reconcile pass to end',
    },
  );
  await eventually(async () => (await unfinished()) === 0, {
    timeout: storm.timeoutMs,
    interval: 2000,
    what: 'every reconcile build to end',
  });
  const records = ofRun(await listBuilds(front, 'trigger=reconcile'));
  const failed = records
    .filter((r) => r.status !== 'success')
    .map((r) => `${r.repository} ${r.status ?? ''}`);
  if (records.length !== storm.repositories || failed.length > 0)
    throw new Error(
      `the reconcile built ${records.length} of ${storm.repositories}; failed: ${failed.join(', ')}`,
    );
  return Date.now();
}

const reuses = async (replicas: readonly Replica[]): Promise<number> =>
  (await Promise.all(replicas.map((r) => metricValue(r.url, 'service_build_reuses_total')))).reduce(
    (a, b) => a + b,
    0,
  );

async function measureRefresh(storm: Running, base: string): Promise<RefreshStormFigures> {
  const { replicas } = storm;
  const front = replicas[0] as Replica;
  const reconciledAt = await reconciled(storm);
  // Read once the reconcile ran: the holder may log that it runs the schedules after the start.
  const began = Math.min(...linesOf(replicas, 'schedules: this instance runs them').map(timeOf));
  const baseline = await passAfter(storm, reconciledAt, 'a refresh pass after the reconcile builds');
  const reusedBefore = await reuses(replicas);
  const movedAt = await moveBase(base);
  const ci = await ciInTheMiddle(storm, 'refresh');
  await passAfter(storm, movedAt, 'a whole refresh pass after the base moved');
  const redisUsedBytes = await usedMemory(storm.redis);
  const refreshed = async () =>
    (await listBuilds(front, 'trigger=refresh')).filter((r) => r.image.includes(storm.run));
  const records = await refreshed();
  if (records.length === 0) throw new Error('a whole refresh pass after the base moved queued nothing');
  const created = records.map((r) => Date.parse(r.startedAt));
  // The pass that queued the first of them (one that began before the move may have queued some).
  const pass = refreshPasses(replicas).find((p) => p.done >= Math.min(...created)) ?? baseline;
  const queuedMs = Math.max(...created) - pass.start;
  storm.onQueued?.({ queuedMs, redisUsedBytes });
  // By request: a build started in a free slot logs its end with its request id only.
  const ids = new Set(records.map((r) => r.requestId));
  const ended = () =>
    [...linesOf(replicas, 'build succeeded'), ...linesOf(replicas, 'build failed')].filter((l) =>
      ids.has(String(l.requestId)),
    );
  const endedCount = () => new Set(ended().map((l) => l.requestId)).size;
  await eventually(() => endedCount() >= ids.size, {
    timeout: storm.timeoutMs,
    interval: 2000,
    what: () => `every refresh build to end (${endedCount()} of ${ids.size})`,
  });
  const finished = await refreshed();
  const reused = (await reuses(replicas)) - reusedBefore;
  return {
    records: finished,
    queuedAllMs: queuedMs,
    endedMs: Math.max(...ended().map(timeOf)) - pass.start,
    built: finished.filter((r) => r.status === 'success').length - reused,
    reused,
    skipped: skippedOf(storm, finished, baseline.start),
    ranTwice: ranTwiceOf(replicas, finished),
    ci: { ...ci, record: await finishedRecord(front, ci.accepted.id) },
    redisUsedBytes,
    passMs: pass.done - pass.start,
    moveToPassMs: pass.start - movedAt,
    reconciledMs: reconciledAt - began,
  };
}
