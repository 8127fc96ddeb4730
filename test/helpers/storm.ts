/**
 * A reconcile storm on real replicas (docs/queue.md), shared by test/integration/prebuilds-storm.test.ts
 * and bench/storm.ts (whose refresh storm, test/helpers/storm-refresh.ts, runs on the same parts): `repositories` configured repositories of one tenant with no image yet, one
 * reconcile pass on `replicas` service processes of `slots` slots each (`build.maxQueued` 5: the
 * prebuilds have their own bound), a CI build of another tenant arriving in the middle. It gives
 * what a user could check: the records, how long queueing took, how often each build ran, how many
 * slot turns the CI build waited, and Redis' memory.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildRecord } from '../../src/builds/types.js';
import { httpsRepo, ownDockerfileRepo, stack } from './build-support.js';
import { eventually } from './eventually.js';
import { metricValue } from './metrics.js';
import type { RedisKind } from './redis-kind.js';
import { startReplicaRedis, type ReplicaRedis } from './replica-redis.js';
import {
  listBuilds,
  postAsync,
  replicaEnv,
  serverGitCredentials,
  startReplicas,
  stopReplicas,
  type Replica,
} from './replicas.js';

export interface StormOptions {
  readonly repositories: number;
  readonly replicas: number;
  readonly slots: number;
  readonly kind: RedisKind;
  /** How long every build may take to end, in all. */
  readonly timeoutMs: number;
  /** Told once the pass has queued every repository (a long storm's first figures). */
  readonly onQueued?: (figures: { queuedMs: number; redisUsedBytes: number }) => void;
}

export interface StormFigures {
  /** The storm's records (trigger `reconcile`), read once every build ended. */
  readonly records: readonly BuildRecord[];
  /** From the reconcile pass's start to the last storm record's creation (queued or started). */
  readonly queuedAllMs: number;
  /** From the pass's start to the end of the last build. */
  readonly endedMs: number;
  /** Builds that ran BuildKit, and builds answered by reuse (service_build_reuses_total). */
  readonly built: number;
  readonly reused: number;
  /** Configured repositories without a record, and log lines of prebuilds skipped or refused. */
  readonly skipped: readonly string[];
  /** Repositories with more than one record, and builds that ended more than once. */
  readonly ranTwice: readonly string[];
  /**
   * The CI build: its 202 record and its final one, the storm builds that took a slot between its
   * arrival and its start, and that count in turns of every replica's slots.
   */
  readonly ci: {
    readonly accepted: BuildRecord;
    readonly record: BuildRecord;
    readonly takenBefore: number;
    readonly slotTurns: number;
  };
  /** Redis' used_memory (every master of a cluster) once the pass queued every repository. */
  readonly redisUsedBytes: number;
}

export const timeOf = (line: Record<string, unknown>): number => Date.parse(String(line.time));
export const linesOf = (replicas: readonly Replica[], msg: string): Record<string, unknown>[] =>
  replicas.flatMap((r) => r.service.lines().filter((l) => l.msg === msg));

/**
 * `count` served repositories of one tenant, copies of one with a cheap definition `FROM from`: hard
 * links (`cp -al`: the git server only reads them), as a copy of each file takes minutes at 2,000.
 */
function stormRepositories(run: string, count: number, from: string): { urls: string[]; remove: () => void } {
  const first = ownDockerfileRepo(`FROM ${from}\nENV IBS_STORM=${run}\n`);
  const source = join(stack.GIT_REPOS_DIR, `${first.name}.git`);
  const tenant = join(stack.GIT_REPOS_DIR, `storm-${run}`);
  const names = Array.from({ length: count }, (_, i) => `storm-${run}/repo-${i}`);
  mkdirSync(tenant);
  for (const name of names) execFileSync('cp', ['-al', source, join(stack.GIT_REPOS_DIR, `${name}.git`)]);
  return {
    urls: names.map(httpsRepo),
    remove: () => {
      first.remove();
      rmSync(tenant, { recursive: true, force: true });
    },
  };
}

/** Runs the reconcile storm and gives its figures; everything it made is removed before it resolves. */
export function runStorm(options: StormOptions): Promise<StormFigures> {
  return stormOn(options, () => Promise.resolve({ from: stack.BASE_IMAGE_ANON }), measure);
}

/** What a storm starts from, made before its replicas start: it may add its cleanups. */
export interface StormStart {
  readonly run: string;
  readonly dir: string;
  readonly redis: ReplicaRedis;
  readonly cleanups: (() => unknown)[];
}

/**
 * What the storm's repositories are built `from`, fields added to each configuration, and
 * environment added to each replica's.
 */
export interface StormSetup {
  readonly from: string;
  readonly configuration?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

/**
 * A storm's parts (its Redis, repositories, the CI repository, the replicas) around `measure`,
 * after `prepare`; everything is removed before it resolves.
 */
export async function stormOn<F>(
  options: StormOptions,
  prepare: (start: StormStart) => Promise<StormSetup>,
  measure: (storm: Running) => Promise<F>,
): Promise<F> {
  const run = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ibs-storm-'));
  const cleanups: (() => unknown)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const redis = await startReplicaRedis(options.kind);
    cleanups.push(() => redis.dispose());
    const setup = await prepare({ run, dir, redis, cleanups });
    const repos = stormRepositories(run, options.repositories, setup.from);
    cleanups.push(repos.remove);
    const ci = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_STORM_CI=${run}\n`);
    cleanups.push(ci.remove);
    const replicas = await startReplicas(
      Array.from({ length: options.replicas }, (_, i) => `r${i}`),
      replicaEnv(stack, redis, stormEnv(dir, run, repos.urls, options, setup)),
    );
    cleanups.push(() => stopReplicas(replicas));
    const running = { ...options, run, redis, replicas, ciRepository: ci.repository, urls: repos.urls };
    return await measure(running).catch((err: unknown) => {
      throw new Error(`the storm failed: ${String(err)}\n${replicasState(replicas)}`, { cause: err });
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

/** Each replica's exit (if it ended), its last log lines and the end of its stderr: for a failure. */
function replicasState(replicas: readonly Replica[]): string {
  return replicas
    .map((r) => {
      const exit = r.service.child.exitCode ?? r.service.child.signalCode ?? 'none';
      const last = r.service.stdout().trimEnd().split('\n').slice(-5);
      return [`${r.name}: exit ${String(exit)}`, ...last, r.service.stderr().slice(-2000)].join('\n');
    })
    .join('\n');
}

function stormEnv(
  dir: string,
  run: string,
  urls: readonly string[],
  options: StormOptions,
  setup: StormSetup,
): Record<string, string> {
  writeFileSync(
    join(dir, 'prebuilds.json'),
    JSON.stringify(
      urls.map((repository, i) => ({
        repository,
        branches: ['main'],
        image: { registry: stack.REGISTRY_ANON, name: `it/storm-${run}/repo-${i}` },
        ...setup.configuration,
      })),
    ),
  );
  return {
    MAX_CONCURRENT_BUILDS: String(options.slots),
    MAX_QUEUED_BUILDS: '5',
    BUILD_HISTORY: String(options.repositories + 50),
    PREBUILD_CONFIGURATIONS_PATH: join(dir, 'prebuilds.json'),
    GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, dir),
    PREBUILD_RECONCILE_INTERVAL_SECONDS: '3600',
    ...setup.env,
  };
}

/** A storm under way: its options, run id, Redis, replicas, CI repository and repository URLs. */
export interface Running extends Omit<StormOptions, 'replicas'> {
  readonly run: string;
  readonly redis: ReplicaRedis;
  readonly replicas: readonly Replica[];
  readonly ciRepository: string;
  readonly urls: readonly string[];
}

async function measure(storm: Running): Promise<StormFigures> {
  const { replicas } = storm;
  const front = replicas[0] as Replica;
  const passStart = timeOf(
    await eventually(() => linesOf(replicas, 'schedules: this instance runs them')[0], {
      timeout: 120_000,
      interval: 100,
      what: 'a replica to take the schedules',
    }),
  );
  const ci = await ciInTheMiddle(storm);
  const passDone = await eventually(
    () => linesOf(replicas, 'schedules: pass done').find((l) => l.pass === 'reconcile'),
    { timeout: storm.timeoutMs, interval: 500, what: 'the reconcile pass to end' },
  );
  const redisUsedBytes = await usedMemory(storm.redis);
  storm.onQueued?.({ queuedMs: timeOf(passDone) - passStart, redisUsedBytes });
  const ended = () => linesOf(replicas, 'build succeeded').length + linesOf(replicas, 'build failed').length;
  await eventually(() => ended() >= storm.repositories + 1, {
    timeout: storm.timeoutMs,
    interval: 2000,
    what: () => `every build of the storm to end (${ended()} of ${storm.repositories + 1})`,
  });
  const endedAt = Math.max(...linesOf(replicas, 'build succeeded').map(timeOf));
  const records = (await listBuilds(front, 'trigger=reconcile')).filter((r) => r.image.includes(storm.run));
  await tagsMoved(replicas, records);
  const reused = (
    await Promise.all(replicas.map((r) => metricValue(r.url, 'service_build_reuses_total')))
  ).reduce((a, b) => a + b, 0);
  return {
    records,
    queuedAllMs: Math.max(timeOf(passDone), ...records.map((r) => Date.parse(r.startedAt))) - passStart,
    endedMs: endedAt - passStart,
    built: records.filter((r) => r.status === 'success').length - reused,
    reused,
    skipped: skippedOf(storm, records),
    ranTwice: ranTwiceOf(replicas, records),
    ci: { ...ci, record: await finishedRecord(front, ci.accepted.id) },
    redisUsedBytes,
  };
}

/** Resolves once the replica that ran each successful build said it moved its branch tag (or after a minute). */
async function tagsMoved(replicas: readonly Replica[], records: readonly BuildRecord[]): Promise<void> {
  const succeeded = records.filter((r) => r.status === 'success').map((r) => r.id);
  const moved = () => new Set(linesOf(replicas, 'branch tag moved').map((l) => String(l.buildId)));
  await eventually(() => succeeded.every((id) => moved().has(id)), {
    timeout: 60_000,
    interval: 500,
    what: 'every branch tag to move',
  }).catch(() => undefined);
}

/**
 * Once the storm (its builds of `trigger`) fills the queue: the CI build, and the storm builds taken
 * before it started.
 */
export async function ciInTheMiddle(
  storm: Running,
  trigger: 'reconcile' | 'refresh' = 'reconcile',
): Promise<{ accepted: BuildRecord; takenBefore: number; slotTurns: number }> {
  const [front, other] = storm.replicas as [Replica, Replica];
  // Half the storm's waiting builds (at most 20) are queued first: the CI build arrives in the middle.
  const waiting = Math.min(20, Math.floor((storm.repositories - storm.replicas.length * storm.slots) / 2));
  await eventually(
    async () => (await listBuilds(front, `status=queued&trigger=${trigger}`)).length >= waiting,
    { timeout: 600_000, interval: 500, what: 'the storm to fill the queue' },
  );
  const arrived = Date.now();
  const record = await postAsync(other, storm.ciRepository, {
    registry: stack.REGISTRY_ANON,
    name: `it/storm-${storm.run}/ci`,
  });
  const taken = await eventually(
    () =>
      linesOf(storm.replicas, 'build taken from the queue').find((l) => l.buildId === record.id) ??
      record.phase !== 'queued',
    { timeout: 600_000, interval: 100, what: 'the CI build to start' },
  );
  const startedAt = taken === true ? arrived : timeOf(taken);
  const takenBefore = linesOf(storm.replicas, 'build taken from the queue').filter(
    (l) => l.buildId !== record.id && timeOf(l) >= arrived && timeOf(l) < startedAt,
  ).length;
  return { accepted: record, takenBefore, slotTurns: takenBefore / (storm.replicas.length * storm.slots) };
}

export async function finishedRecord(replica: Replica, id: string): Promise<BuildRecord> {
  return eventually(
    async () => {
      const record = (await (await fetch(`${replica.url}/builds/${id}`)).json()) as BuildRecord;
      return record.phase === 'finished' && record;
    },
    { timeout: 300_000, interval: 250, what: `build ${id} to end` },
  );
}

/** Repositories without a record, and log lines (at `since` or later) of prebuilds not started or read. */
export function skippedOf(storm: Running, records: readonly BuildRecord[], since = 0): string[] {
  const seen = new Set(records.map((r) => r.repository));
  const missing = storm.urls.filter((url) => !seen.has(url)).map((url) => `no build: ${url}`);
  const refused = storm.replicas.flatMap((r) =>
    r.service
      .lines()
      .filter((l) => /not started|not read/.test(String(l.msg)) && timeOf(l) >= since)
      .map((l) => `${r.name}: ${String(l.msg)} ${String(l.repository ?? '')}`),
  );
  return [...missing, ...refused];
}

/** Repositories with more than one of `records`, and builds of them that ended more than once. */
export function ranTwiceOf(replicas: readonly Replica[], records: readonly BuildRecord[]): string[] {
  const count = (values: readonly string[]) => {
    const seen = new Map<string, number>();
    for (const value of values) seen.set(value, (seen.get(value) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([value, n]) => `${value} x${n}`);
  };
  // By request: a build started in a free slot logs its end with its request id only.
  const ids = new Set(records.map((r) => r.requestId));
  const endings = [...linesOf(replicas, 'build succeeded'), ...linesOf(replicas, 'build failed')]
    .map((l) => String(l.requestId))
    .filter((id) => ids.has(id));
  return [...count(records.map((r) => r.repository)), ...count(endings)];
}

/** INFO memory's used_memory, summed over every master of a cluster. */
export async function usedMemory(redis: ReplicaRedis): Promise<number> {
  const { client } = await redis.connection();
  const nodes = 'nodes' in client ? client.nodes('master') : [client];
  const infos = await Promise.all(nodes.map((node) => node.info('memory')));
  return infos.reduce((sum, info) => sum + Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN), 0);
}
