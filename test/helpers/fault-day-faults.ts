/**
 * The faults of a day of faults (test/helpers/fault-day.ts), one after another while requests
 * stream: a replica SIGKILLed with builds running and queued, Redis restarted, a builder stopped,
 * the registry answering 503, client connections cut mid-poll. Each is timed as a window.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { buildAliveKey } from '../../src/redis/keys.js';
import type { PrivateBridge } from '../stack/builders.js';
import { listBuilds, restartReplica, within, type Replica } from './replicas.js';
import type { DayOptions, Fault, FaultWindow } from './fault-day-types.js';
import type { Stage } from './fault-day-stage.js';
import type { DayTraffic } from './fault-day-traffic.js';

interface Strike {
  readonly stage: Stage;
  readonly traffic: DayTraffic;
  readonly options: DayOptions;
  readonly faults: FaultWindow[];
  /** Ids of the builds that ran on the killed replica when it died. */
  readonly killedRunning: string[];
}

/** Every fault once a round, `options.rounds` times: their windows, and the builds the kill cut. */
export async function strikeFaults(
  stage: Stage,
  traffic: DayTraffic,
  options: DayOptions,
): Promise<{ faults: FaultWindow[]; killedRunning: string[] }> {
  const strike: Strike = { stage, traffic, options, faults: [], killedRunning: [] };
  for (let round = 0; round < options.rounds; round += 1) {
    await window(strike, 'replica killed', () => killReplica(strike));
    await window(strike, 'Redis restarted', () => restartRedis(strike));
    await window(strike, 'builder stopped', () => stopBuilder(strike));
    await window(strike, 'registry 503', () => refuseRegistry(strike));
    await window(strike, 'polls cut', () => cutPolls(strike));
  }
  return { faults: strike.faults, killedRunning: strike.killedRunning };
}

/** Runs a fault as a timed window, then lets the day settle a moment. */
async function window(strike: Strike, fault: Fault, act: () => Promise<void>): Promise<void> {
  const startedAt = Date.now();
  strike.options.log(`fault: ${fault}`);
  await act();
  strike.faults.push({ fault, startedAt, endedAt: Date.now() });
  strike.options.log(`fault over: ${fault} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
  await sleep(3000);
}

const ready = async (r: Replica): Promise<boolean> => (await fetch(`${r.url}/health/ready`)).status === 200;

/** Builds of its own sent to the third replica, SIGKILL of it once it runs one, a new one in its place. */
async function killReplica({ stage, traffic, killedRunning }: Strike): Promise<void> {
  const victim = stage.replicas[2] as Replica;
  // Builds of its own, so that it runs some (its two slots) and some wait in the queue.
  const its = [0, 1, 2, 3].map(() => traffic.launch('async', false, victim));
  const pid = String(victim.service.child.pid);
  const runsOnVictim = async (id: string | undefined): Promise<boolean> =>
    id !== undefined && (await stage.store.get(buildAliveKey(id)))?.endsWith(`:${pid}`) === true;
  await within('the replica to run a build', 120_000, async () => {
    await stage.store.connect().catch(() => undefined);
    for (const s of its) {
      if (s.id !== undefined && (await runsOnVictim(s.id)) && s.record?.phase !== 'queued') return true;
    }
    return false;
  });
  for (const s of its) {
    if (await runsOnVictim(s.id)) killedRunning.push(s.id as string);
  }
  traffic.down.add(victim.name);
  stage.everyReplica.push(victim);
  stage.replicas[2] = await restartReplica(victim, stage.env);
  traffic.down.delete(victim.name);
}

/** An ibs build accepted, then Redis stopped until no replica is ready, and started again. */
async function restartRedis({ stage, traffic }: Strike): Promise<void> {
  const first = stage.replicas[0] as Replica;
  const ibs = traffic.launch('ibs', false, first, 'Redis restarted');
  await within(
    'the ibs build to be accepted',
    60_000,
    async () => (await listBuilds(first, `requestId=${ibs.requestId}`)).length > 0,
  );
  await stage.redis.stop();
  await Promise.all(
    stage.replicas.map((r) => within(`${r.name} not ready`, 30_000, async () => !(await ready(r)))),
  );
  await stage.redis.start();
  await Promise.all(stage.replicas.map((r) => within(`${r.name} ready again`, 60_000, () => ready(r))));
}

/** The second builder stopped for `builderStopMs`, an ibs build sent meanwhile. */
async function stopBuilder({ stage, traffic, options }: Strike): Promise<void> {
  const b = stage.bridges[1] as PrivateBridge;
  await b.stop();
  traffic.launch('ibs', false, stage.replicas[1] as Replica, 'builder stopped');
  await sleep(options.builderStopMs);
  await b.start();
}

/** The registry answers 503 to every /v2/ request for `registryOutageMs`. */
async function refuseRegistry({ stage, options }: Strike): Promise<void> {
  const until = Date.now() + options.registryOutageMs;
  for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'PATCH']) {
    stage.front.refuse({ method, path: /^\/v2\//, status: 503, code: 'UNAVAILABLE', until });
  }
  await sleep(options.registryOutageMs);
}

/** Long polls cut for `cutWindowMs`, three async builds sent meanwhile. */
async function cutPolls({ traffic, options }: Strike): Promise<void> {
  traffic.cutting = true;
  for (let i = 0; i < 3; i += 1) traffic.launch('async', i % 2 === 0, traffic.anyLive(i));
  await sleep(options.cutWindowMs);
  traffic.cutting = false;
}
