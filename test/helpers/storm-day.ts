/**
 * The storm day (test/integration/fault-day.test.ts and `bench:faults -- --storm N`): four
 * replicas on a Redis of the test's own that fails over (test/helpers/redis-topologies.ts), N
 * async builds of a few small repositories queued at once (most answered by reuse), then in turn a
 * rolling update of every replica (SIGTERM, a new one on its port), a Redis failover (the queue's
 * primary SIGKILLed, its replica promoted), Redis at maxmemory, a replica SIGKILLed. Callers go
 * on sending builds meanwhile and retry a 503 as a client would; a queue drained before a fault is
 * filled again with a quarter of N. Then every build is accounted for
 * (test/helpers/storm-count.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BuildRecord } from '../../src/builds/types.js';
import { ownDockerfileRepo, stack, uniqueName } from './build-support.js';
import { eventually } from './eventually.js';
import { newSecret, startReceiver, type EventReceiver } from './event-receiver.js';
import { ibsBuildArgs, runIbs } from './ibs-process.js';
import { startFailoverTopology, type RedisTopology } from './redis-topologies.js';
import { replicaFront, type ReplicaFront } from './replica-front.js';
import { replicaEnv, serverGitCredentials, stopReplicas, type Replica } from './replicas.js';
import { spawnService } from './service-process.js';
import { countStorm, type StormBuild, type StormFault, type StormReport } from './storm-count.js';

export interface StormOptions {
  /** Builds queued at once before the first fault. */
  readonly builds: number;
  readonly topology: RedisTopology['kind'];
  /** How many repositories the builds are spread over (each built once, then reused). */
  readonly repositories: number;
  /** How long Redis stays at maxmemory. */
  readonly memoryFullMs: number;
  /**
   * One build sent every this many ms while the faults strike, `builds` of them at most (and an
   * ibs build per fault): callers that meet each fault.
   */
  readonly trickleMs: number;
  readonly log: (line: string) => void;
}

const REPLICAS = ['r1', 'r2', 'r3', 'r4'] as const;
/** A caller's wait before it sends a refused (503) request again, and its limit in all. */
const RETRY_MS = 500;
const GIVE_UP_MS = 15 * 60_000;

/** Starts a replica on `port` (0: any); resolves once it is ready. */
async function startReplica(name: string, env: Record<string, string>, port = 0): Promise<Replica> {
  const service = spawnService(['--port', String(port)], env);
  const listening = await service.waitForLog('listening', 120_000);
  const url = `http://127.0.0.1:${String(listening.port)}`;
  await eventually(async () => (await fetch(`${url}/health/ready`).catch(() => undefined))?.status === 200, {
    timeout: 120_000,
    interval: 100,
    what: `replica ${name} to be ready`,
  });
  return { name, url, service };
}

/** The environment of the four replicas: the topology's Redis, server git credentials, events. */
function stormEnv(dir: string, topology: RedisTopology, receiver: EventReceiver, secret: string) {
  const subscriptions = join(dir, 'subscriptions.json');
  writeFileSync(
    subscriptions,
    JSON.stringify([
      { name: 'storm', url: receiver.url, secrets: [secret], types: ['dev.cdevents.build.finished'] },
    ]),
  );
  const { REDIS_URL: _none, ...base } = replicaEnv(stack, '', {
    MAX_CONCURRENT_BUILDS: '2',
    // The storm's N builds (and the refills between faults) all wait: none is refused as QUEUE_FULL.
    MAX_QUEUED_BUILDS: '10000',
    BUILD_TIMEOUT_SECONDS: '300',
    BUILD_HISTORY: '5000',
    GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, dir),
    EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
    EVENT_RETRY_SECONDS: Array.from({ length: 60 }, () => '2').join(','),
    SHUTDOWN_GRACE_SECONDS: '60',
  });
  return { ...base, ...topology.env };
}

/** What the storm holds from its start: filled as the parts start, let go by `releaseStorm`. */
interface StormScene {
  readonly dir: string;
  readonly cleanup: (() => Promise<void> | void)[];
  /** The four replicas now (a replaced one in its place). */
  readonly replicas: Replica[];
  /** Every replica process of the day, the replaced ones too (their output: IBS_FAULT_DAY_LOGS). */
  readonly everyReplica: Replica[];
}

/** An ibs build sent during a fault: its exit and its stderr once it has ended. */
interface IbsRun {
  readonly during: string;
  readonly exit: Promise<number | string>;
  readonly stderr: () => string;
}

/** What the storm runs on and what it has sent, shared by its steps. */
interface Storm {
  readonly options: StormOptions;
  readonly scene: StormScene;
  readonly topology: RedisTopology;
  readonly receiver: EventReceiver;
  readonly env: Record<string, string>;
  /** Replicas no request goes to (the one being replaced). */
  readonly down: Set<string>;
  /** The next live replica, in turn. */
  readonly live: () => Replica;
  readonly front: ReplicaFront;
  readonly repos: readonly { repository: string; name: string }[];
  readonly builds: StormBuild[];
  readonly faults: StormFault[];
  /** Each build's submit and follow. */
  readonly running: Promise<void>[];
  readonly ibsRuns: IbsRun[];
  /** Callers inside a run of 503s now: the next fault waits for none, so no run spans two faults. */
  in503: number;
}

export async function runStormDay(options: StormOptions): Promise<StormReport> {
  const { log } = options;
  const scene: StormScene = {
    dir: mkdtempSync(join(tmpdir(), 'ibs-storm-')),
    cleanup: [],
    replicas: [],
    everyReplica: [],
  };
  scene.cleanup.push(() => rmSync(scene.dir, { recursive: true, force: true }));
  try {
    const storm = await setStorm(options, scene);
    log(`queueing ${options.builds} builds on ${options.topology}`);
    for (let i = 0; i < options.builds; i += 1) send(storm);
    const trickle = trickleBuilds(storm);
    const rollingExits = await strikeFaults(storm);
    await trickle.stop();
    log(`${storm.builds.length} builds sent; waiting for their ends`);
    await awaitEnds(storm);
    const ibsExits = await Promise.all(storm.ibsRuns.map((r) => r.exit));
    return await countStorm({
      builds: storm.builds,
      faults: storm.faults,
      rollingExits,
      receiver: storm.receiver,
      ibs: storm.ibsRuns.map((r, i) => ({
        during: r.during,
        exit: ibsExits[i] ?? 'none',
        stderr: r.stderr(),
      })),
      anyReplica: () => storm.live(),
    });
  } finally {
    await releaseStorm(scene);
  }
}

/** Starts the topology, the receiver, the four replicas and their front; serves the repositories. */
async function setStorm(options: StormOptions, scene: StormScene): Promise<Storm> {
  const { cleanup, replicas } = scene;
  const topology = await startFailoverTopology(options.topology);
  cleanup.push(() => topology.dispose());
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  cleanup.push(() => receiver.close());
  const env = stormEnv(scene.dir, topology, receiver, secret);
  replicas.push(...(await Promise.all(REPLICAS.map((name) => startReplica(name, env)))));
  scene.everyReplica.push(...replicas);
  const down = new Set<string>();
  let turn = 0;
  const live = (): Replica => {
    const up = replicas.filter((r) => !down.has(r.name));
    return up[turn++ % up.length] as Replica;
  };
  const front = await replicaFront(live);
  cleanup.push(() => front.close());

  const repos = Array.from({ length: options.repositories }, () => {
    const repo = ownDockerfileRepo(
      `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(8).toString('hex')} > /nonce\n`,
    );
    cleanup.push(repo.remove);
    return { repository: repo.repository, name: uniqueName('storm') };
  });
  return {
    options,
    scene,
    topology,
    receiver,
    env,
    down,
    live,
    front,
    repos,
    builds: [],
    faults: [],
    running: [],
    ibsRuns: [],
    in503: 0,
  };
}

/** The fault striking now ('none' between faults). */
const current = (storm: Storm): string => storm.faults.find((f) => f.endedAt === undefined)?.fault ?? 'none';

/** POST /build as a client would: a 503 or a broken connection is sent again (same key). */
async function submit(storm: Storm, b: StormBuild): Promise<void> {
  const repo = storm.repos[b.repo % storm.repos.length] as Storm['repos'][number];
  const body = { repository: repo.repository, image: { registry: stack.REGISTRY_ANON, name: repo.name } };
  let since503: { at: number; during: string } | undefined;
  while (Date.now() < b.sentAt + GIVE_UP_MS) {
    const replica = storm.live();
    b.posts += 1;
    try {
      const res = await fetch(`${replica.url}/build`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          prefer: 'respond-async',
          'x-request-id': b.requestId,
          'idempotency-key': b.requestId,
        },
        body: JSON.stringify(body),
      });
      const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (res.status === 503) {
        if (since503 === undefined) storm.in503 += 1;
        since503 ??= { at: Date.now(), during: current(storm) };
        b.unavailable += 1;
        if (res.headers.get('retry-after') === null) b.noRetryAfter += 1;
        await sleep(RETRY_MS);
        continue;
      }
      if (since503 !== undefined) {
        b.stretches.push({ during: since503.during, ms: Date.now() - since503.at });
        storm.in503 -= 1;
      }
      if (res.status === 202) b.id = String(answer.id);
      else b.refused = `${res.status} ${String(answer.code ?? answer.error ?? '')}`;
      return;
    } catch {
      b.noAnswer += 1;
      await sleep(RETRY_MS);
    }
  }
  if (since503 !== undefined) storm.in503 -= 1;
  b.refused = 'gave up';
}

/** Long polls the build until it finished, on any live replica. */
async function follow(storm: Storm, b: StormBuild): Promise<void> {
  while (b.id !== undefined && Date.now() < b.sentAt + GIVE_UP_MS && b.record?.phase !== 'finished') {
    try {
      const res = await fetch(`${storm.live().url}/builds/${b.id}?wait=20`);
      if (res.status === 200) b.record = (await res.json()) as BuildRecord;
      else await sleep(RETRY_MS);
    } catch {
      await sleep(RETRY_MS);
    }
  }
}

/** Sends one build, submitted and followed in the background (`running`). */
function send(storm: Storm): void {
  const b: StormBuild = {
    requestId: randomUUID(),
    repo: storm.builds.length,
    sentAt: Date.now(),
    during: current(storm),
    posts: 0,
    noAnswer: 0,
    noRetryAfter: 0,
    unavailable: 0,
    stretches: [],
  };
  storm.builds.push(b);
  storm.running.push(submit(storm, b).then(() => follow(storm, b)));
}

/** An ibs build through the front, during the fault striking now. */
function sendIbs(storm: Storm): void {
  const repo = storm.repos[storm.ibsRuns.length % storm.repos.length] as Storm['repos'][number];
  const ibs = runIbs(
    ibsBuildArgs(
      {
        server: storm.front.url,
        repository: repo.repository,
        registry: stack.REGISTRY_ANON,
        name: repo.name,
      },
      '--timeout',
      '300',
    ),
  );
  storm.ibsRuns.push({ during: current(storm), exit: ibs.exited, stderr: ibs.stderr });
}

/** One build every `trickleMs`, `builds` of them at most, until stopped. */
function trickleBuilds(storm: Storm): { stop: () => Promise<void> } {
  let trickling = true;
  const trickle = (async () => {
    for (let sent = 0; trickling && sent < storm.options.builds; sent += 1) {
      await sleep(storm.options.trickleMs);
      if (trickling) send(storm);
    }
  })();
  return {
    stop: async () => {
      trickling = false;
      await trickle;
    },
  };
}

/** Runs a fault as a timed window (its inner time when `act` gives one), an ibs build sent in it. */
async function strike(storm: Storm, fault: string, act: () => Promise<number | void>): Promise<void> {
  const { builds, options } = storm;
  // The storm goes on: a queue drained by the faults before is filled again (a quarter of N).
  const open = builds.filter((b) => b.record?.phase !== 'finished' && b.refused === undefined).length;
  if (open < options.builds / 4) for (let i = 0; i < options.builds / 4; i += 1) send(storm);
  const f: StormFault = { fault, startedAt: Date.now() };
  storm.faults.push(f);
  options.log(`fault: ${fault}`);
  sendIbs(storm);
  const inner = await act();
  if (typeof inner === 'number') f.innerMs = inner;
  f.endedAt = Date.now();
  options.log(`fault over: ${fault} (${((f.endedAt - f.startedAt) / 1000).toFixed(1)} s)`);
  // Faults come apart, as on a real day: every caller answered again before the next one.
  await eventually(() => storm.in503 === 0, {
    timeout: 180_000,
    interval: 200,
    what: `callers answered after ${fault}`,
  });
}

/** The four faults in turn; the exits of the replicas the rolling update stopped. */
async function strikeFaults(storm: Storm): Promise<(number | string)[]> {
  const { topology, options } = storm;
  const rollingExits: (number | string)[] = [];
  await strike(storm, 'rolling update', () => rollingUpdate(storm, rollingExits));
  await strike(storm, `Redis failover (${options.topology})`, () => topology.failover());
  await strike(storm, 'Redis at maxmemory', async () => {
    const undo = await topology.fillMemory();
    await sleep(options.memoryFullMs);
    await undo();
  });
  await strike(storm, 'replica SIGKILLed', () => killReplica(storm));
  return rollingExits;
}

/** Each replica in turn: SIGTERM, its exit kept, a new one on its port. */
async function rollingUpdate(storm: Storm, rollingExits: (number | string)[]): Promise<void> {
  const { replicas, everyReplica } = storm.scene;
  for (const [i, old] of replicas.entries()) {
    storm.down.add(old.name);
    old.service.child.kill('SIGTERM');
    rollingExits.push(await old.service.exited);
    replicas[i] = await startReplica(old.name, storm.env, Number(new URL(old.url).port));
    everyReplica.push(replicas[i] as Replica);
    storm.down.delete(old.name);
  }
}

/** The fourth replica SIGKILLed, a new one on its port. */
async function killReplica(storm: Storm): Promise<void> {
  const { replicas, everyReplica } = storm.scene;
  const victim = replicas[3] as Replica;
  storm.down.add(victim.name);
  await victim.service.lose();
  replicas[3] = await startReplica(victim.name, storm.env, Number(new URL(victim.url).port));
  everyReplica.push(replicas[3] as Replica);
  storm.down.delete(victim.name);
}

/** Waits for every build's end, telling every 30 s how many are still open. */
async function awaitEnds(storm: Storm): Promise<void> {
  const { builds } = storm;
  const progress = setInterval(() => {
    const unanswered = builds.filter((b) => b.id === undefined && b.refused === undefined).length;
    const open = builds.filter((b) => b.id !== undefined && b.record?.phase !== 'finished').length;
    storm.options.log(`${unanswered} not accepted yet, ${open} not finished yet`);
  }, 30_000);
  await Promise.all(storm.running).finally(() => clearInterval(progress));
}

/** Writes each replica's output to IBS_FAULT_DAY_LOGS (when set), stops them, lets go of the rest. */
async function releaseStorm(scene: StormScene): Promise<void> {
  const logDir = process.env.IBS_FAULT_DAY_LOGS;
  if (logDir !== undefined) {
    for (const [i, r] of scene.everyReplica.entries())
      writeFileSync(join(logDir, `storm-${r.name}-${i}.log`), r.service.stdout() + r.service.stderr());
  }
  await stopReplicas(scene.replicas);
  for (const step of scene.cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
}
