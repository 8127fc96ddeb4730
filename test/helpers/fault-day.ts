/**
 * A day of faults on the real stack, shared by test/integration/fault-day.test.ts (a short day,
 * asserting the zeros) and bench/faults.ts (a longer one, printing the table). Three replicas on a
 * Redis of their own (append-only, so a restart keeps its data), two builders behind private
 * bridges, a registry front the day controls and a webhook receiver. A stream of async and sync
 * builds, reuses and real builds runs while one fault after another strikes: a replica SIGKILLed
 * with builds running and queued, Redis restarted, a builder stopped, the registry answering 503,
 * client connections cut mid-poll. Then every build is accounted for. IBS_FAULT_DAY_LOGS=<dir>:
 * each replica's output is written there at the end (one file per process, the killed one's too).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { BuildRecord } from '../../src/builds/types.js';
import { privateBuilderBridge, type PrivateBridge } from '../stack/builders.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from './build-support.js';
import { newSecret, startReceiver, type EventReceiver } from './event-receiver.js';
import { runIbs, ibsBuildArgs } from './ibs-process.js';
import { startRedis, type RedisProcess } from './redis-process.js';
import { registryFront, type RegistryFront } from './registry-front.js';
import {
  listBuilds,
  replicaEnv,
  restartReplica,
  startReplicas,
  stopReplicas,
  within,
  type Replica,
} from './replicas.js';
import { reachable } from './retention-support.js';
import { buildAliveKey } from '../../src/redis/keys.js';

export interface DayOptions {
  /** Builds sent between faults (at least this many in all are sent, one every `everyMs`). */
  readonly minBuilds: number;
  readonly everyMs: number;
  /** How many times the whole sequence of faults is repeated. */
  readonly rounds: number;
  readonly builderStopMs: number;
  readonly registryOutageMs: number;
  readonly cutWindowMs: number;
  readonly buildTimeoutSeconds: number;
  readonly log: (line: string) => void;
}

type Fault = 'replica killed' | 'Redis restarted' | 'builder stopped' | 'registry 503' | 'polls cut';

/** A failure's cause, read from its answer: which fault it names ('other' names none). */
type Cause = 'replica lost' | 'not started' | 'registry 503' | 'builder down' | 'Redis down' | 'other';

interface Sent {
  readonly requestId: string;
  readonly mode: 'async' | 'sync' | 'ibs';
  readonly reuse: boolean;
  readonly replica: string;
  /** What POST /build answered (a status), or why no answer came. */
  posted?: number | string;
  /** A synchronous answer's body. */
  syncBody?: Record<string, unknown>;
  /** The build's id, once known (202, or found by its request id). */
  id?: string;
  /** The record as it ended (or as it stood when the wait ran out). */
  record?: BuildRecord;
  ibsExit?: number | string;
  /** The fault running when it was sent, for ibs builds. */
  during?: Fault;
  /** When it was sent (ms since the epoch). */
  readonly sentAt: number;
}

interface FaultWindow {
  readonly fault: Fault;
  readonly startedAt: number;
  readonly endedAt: number;
  /** Ms from the end to the first build answered successfully after it; undefined: none. */
  recoveryMs?: number;
}

export interface DayReport {
  readonly sent: readonly Sent[];
  readonly faults: readonly FaultWindow[];
  accepted: number;
  refused: Record<string, number>;
  success: number;
  failures: Record<Cause, number>;
  otherFailures: string[];
  /** Each failure: its cause, when it ran (from the first fault), its error and its log's tail. */
  failureDetails: string[];
  lost: string[];
  pushedTwice: string[];
  brokenTags: string[];
  undelivered: string[];
  ibsNotZero: string[];
  /**
   * Synchronous answers the record contradicts (the client was told one thing, GET /builds/{id}
   * says another), as `id: answered N, record says ...`.
   */
  contradicted: string[];
  /** Ids of the builds that ran on the killed replica when it died, and their causes. */
  killedRunning: string[];
}

export function causeOf(
  answer: { status: number; body: Record<string, unknown> } | undefined,
  logTail = '',
): Cause {
  const said = `${String(answer?.body.code ?? '')} ${String(answer?.body.error ?? '')}`;
  if (/BUILD_LOST|was lost: its replica/.test(said)) return 'replica lost';
  if (/BUILD_NOT_STARTED|never started/.test(said)) return 'not started';
  const text = `${said}\n${logTail}`;
  if (/\b503\b|Service Unavailable/.test(text)) return 'registry 503';
  if (
    /builder \S+ unreachable|connection refused|transport is closing|code = Unavailable|closed network connection|error reading from server|connection reset|context deadline exceeded/i.test(
      text,
    )
  )
    return 'builder down';
  if (/Redis|shared store|STORE_UNAVAILABLE/.test(text)) return 'Redis down';
  return 'other';
}

const finished = (r: BuildRecord | undefined): boolean => r?.phase === 'finished';

/** The tag of an answered image (`registry/name:tag`), with its name. */
function nameAndTag(image: string, registry: string): { name: string; tag: string } | undefined {
  if (!image.startsWith(`${registry}/`)) return undefined;
  const rest = image.slice(registry.length + 1).split('@')[0] ?? '';
  const colon = rest.lastIndexOf(':');
  if (colon < 0) return undefined;
  return { name: rest.slice(0, colon), tag: rest.slice(colon + 1) };
}

export async function runFaultDay(options: DayOptions): Promise<DayReport> {
  const { log } = options;
  const dir = mkdtempSync(join(tmpdir(), 'ibs-fault-day-'));
  const cleanup: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  let replicas: Replica[] = [];
  const everyReplica: Replica[] = [];
  try {
    const redis: RedisProcess = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    cleanup.push(() => redis.dispose());
    const store = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    store.on('error', () => undefined);
    cleanup.push(() => store.disconnect());
    const secret = newSecret();
    const receiver: EventReceiver = await startReceiver([secret]);
    cleanup.push(() => receiver.close());
    const front: RegistryFront = await registryFront(stack.REGISTRY_ANON);
    cleanup.push(() => front.close());
    const bridges: PrivateBridge[] = [await privateBuilderBridge('a'), await privateBuilderBridge('b')];
    for (const b of bridges) cleanup.push(() => b.stop());
    const subscriptions = join(dir, 'subscriptions.json');
    writeFileSync(
      subscriptions,
      JSON.stringify([
        { name: 'day', url: receiver.url, secrets: [secret], types: ['dev.cdevents.build.finished'] },
      ]),
    );
    const env = replicaEnv(stack, redis.url, {
      BUILDER_ENDPOINT: bridges.map((b) => b.endpoint).join(','),
      INSECURE_REGISTRIES: [stack.REGISTRY_ANON, front.host].join(','),
      MAX_CONCURRENT_BUILDS: '2',
      BUILD_TIMEOUT_SECONDS: String(options.buildTimeoutSeconds),
      BUILD_HISTORY: '2000',
      EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
      EVENT_RETRY_SECONDS: Array.from({ length: 60 }, () => '2').join(','),
    });
    replicas = await startReplicas(['A', 'B', 'C'], env);
    const down = new Set<string>();
    let cutting = false;
    const live = (): Replica[] => replicas.filter((r) => !down.has(r.name));
    const anyLive = (i: number): Replica => {
      const l = live();
      return l[i % l.length] as Replica;
    };

    // One repository whose image every reuse request asks for again (built once, first).
    const reuseRepo = ownDockerfileRepo(
      `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo reuse-${randomBytes(6).toString('hex')}\n`,
    );
    cleanup.push(reuseRepo.remove);
    const reuseName = uniqueName('day-reuse');
    const bodyFor = (reuse: boolean): Record<string, unknown> => {
      if (reuse) {
        return {
          repository: reuseRepo.repository,
          gitCredentials: httpsCreds(),
          image: { registry: front.host, name: reuseName },
        };
      }
      const repo = ownDockerfileRepo(
        `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(8).toString('hex')} > /nonce\n`,
      );
      cleanup.push(repo.remove);
      return {
        repository: repo.repository,
        gitCredentials: httpsCreds(),
        image: { registry: front.host, name: uniqueName('day') },
      };
    };

    const sent: Sent[] = [];
    const deadline = (): number => Date.now() + options.buildTimeoutSeconds * 1000 + 60_000;

    /** Long polls until the build has finished (polls cut while `cutting`; replicas tried in turn). */
    const awaitRecord = async (s: Sent, until: number): Promise<void> => {
      let turn = 0;
      while (s.id !== undefined && Date.now() < until && !finished(s.record)) {
        const replica = anyLive(turn++);
        const abort = new AbortController();
        const cut = cutting ? setTimeout(() => abort.abort(), 300 + Math.random() * 700) : undefined;
        try {
          const res = await fetch(`${replica.url}/builds/${s.id}?wait=20`, { signal: abort.signal });
          if (res.status === 200) s.record = (await res.json()) as BuildRecord;
          else await sleep(500);
        } catch {
          await sleep(200);
        } finally {
          clearTimeout(cut);
        }
      }
    };

    const send = async (s: Sent, body: Record<string, unknown>): Promise<void> => {
      const replica = replicas.find((r) => r.name === s.replica) as Replica;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-request-id': s.requestId,
      };
      if (s.mode === 'async') headers.prefer = 'respond-async';
      try {
        const res = await fetch(`${replica.url}/build`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        s.posted = res.status;
        const answer = (await res.json()) as Record<string, unknown>;
        if (res.status === 202) s.id = String(answer.id);
        else if (res.status === 200 || res.status === 500) s.syncBody = answer;
      } catch (problem) {
        s.posted = `no answer: ${(problem as Error).message}`;
      }
    };

    const sendIbs = async (s: Sent, body: Record<string, unknown>): Promise<void> => {
      const replica = replicas.find((r) => r.name === s.replica) as Replica;
      const image = body.image as { registry: string; name: string };
      const ibs = runIbs(
        ibsBuildArgs(
          {
            server: replica.url,
            repository: String(body.repository),
            registry: image.registry,
            name: image.name,
          },
          '--request-id',
          s.requestId,
          '--timeout',
          String(options.buildTimeoutSeconds),
        ),
        { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD },
      );
      s.ibsExit = await ibs.exited;
      s.posted = s.ibsExit === 0 ? 200 : `ibs exit ${String(s.ibsExit)}: ${ibs.stderr().slice(-600)}`;
    };

    const inFlight: Promise<void>[] = [];
    const launch = (mode: Sent['mode'], reuse: boolean, replica: Replica, during?: Fault): Sent => {
      const s: Sent = {
        requestId: randomUUID(),
        mode,
        reuse,
        replica: replica.name,
        during,
        sentAt: Date.now(),
      };
      sent.push(s);
      const body = bodyFor(reuse);
      inFlight.push(
        (mode === 'ibs' ? sendIbs(s, body) : send(s, body)).then(() => awaitRecord(s, deadline())),
      );
      return s;
    };

    // The image the reuse requests ask for again.
    const first = launch('sync', true, anyLive(0));
    await Promise.all(inFlight);
    if (first.posted !== 200) throw new Error(`the first build answered ${String(first.posted)}`);

    let streaming = true;
    let count = 0;
    const stream = (async () => {
      while (streaming || count < options.minBuilds) {
        const kind = count % 4;
        launch(kind === 0 || kind === 2 ? 'async' : 'sync', kind === 1 || kind === 2, anyLive(count));
        count += 1;
        await sleep(options.everyMs);
      }
    })();

    const faults: FaultWindow[] = [];
    const window = async (fault: Fault, act: () => Promise<void>): Promise<void> => {
      const startedAt = Date.now();
      log(`fault: ${fault}`);
      await act();
      faults.push({ fault, startedAt, endedAt: Date.now() });
      log(`fault over: ${fault} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
      await sleep(3000);
    };
    const killedRunning: string[] = [];
    const ready = async (r: Replica): Promise<boolean> =>
      (await fetch(`${r.url}/health/ready`)).status === 200;

    for (let round = 0; round < options.rounds; round += 1) {
      await window('replica killed', async () => {
        const victim = replicas[2] as Replica;
        // Builds of its own, so that it runs some (its two slots) and some wait in the queue.
        const its = [0, 1, 2, 3].map(() => launch('async', false, victim));
        const pid = String(victim.service.child.pid);
        await within('the replica to run a build', 120_000, async () => {
          await store.connect().catch(() => undefined);
          for (const s of its) {
            if (s.id === undefined) continue;
            const owner = await store.get(buildAliveKey(s.id));
            if (owner?.endsWith(`:${pid}`) === true && s.record?.phase !== 'queued') return true;
          }
          return false;
        });
        for (const s of its) {
          const owner = s.id === undefined ? null : await store.get(buildAliveKey(s.id));
          if (owner?.endsWith(`:${pid}`) === true && s.id !== undefined) killedRunning.push(s.id);
        }
        down.add(victim.name);
        everyReplica.push(victim);
        replicas[2] = await restartReplica(victim, env);
        down.delete(victim.name);
      });
      await window('Redis restarted', async () => {
        const ibs = launch('ibs', false, replicas[0] as Replica, 'Redis restarted');
        await within(
          'the ibs build to be accepted',
          60_000,
          async () => (await listBuilds(replicas[0] as Replica, `requestId=${ibs.requestId}`)).length > 0,
        );
        await redis.stop();
        await Promise.all(
          replicas.map((r) => within(`${r.name} not ready`, 30_000, async () => !(await ready(r)))),
        );
        await redis.start();
        await Promise.all(replicas.map((r) => within(`${r.name} ready again`, 60_000, () => ready(r))));
      });
      await window('builder stopped', async () => {
        const b = bridges[1] as PrivateBridge;
        await b.stop();
        launch('ibs', false, replicas[1] as Replica, 'builder stopped');
        await sleep(options.builderStopMs);
        await b.start();
      });
      await window('registry 503', async () => {
        const until = Date.now() + options.registryOutageMs;
        for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'PATCH']) {
          front.refuse({ method, path: /^\/v2\//, status: 503, code: 'UNAVAILABLE', until });
        }
        await sleep(options.registryOutageMs);
      });
      await window('polls cut', async () => {
        cutting = true;
        for (let i = 0; i < 3; i += 1) launch('async', i % 2 === 0, anyLive(i));
        await sleep(options.cutWindowMs);
        cutting = false;
      });
    }
    streaming = false;
    await stream;
    log(`${sent.length} requests sent; waiting for their answers`);
    await Promise.all(inFlight);

    // Every request's record, found by its request id (a sync answer cut by the kill has one too).
    for (const s of sent) {
      if (s.id === undefined) {
        const records = await listBuilds(anyLive(0), `requestId=${s.requestId}`).catch(() => []);
        const own = records[0];
        if (own !== undefined) {
          s.id = own.id;
          s.record = own;
          await awaitRecord(s, deadline());
        }
      }
    }

    const report: DayReport = {
      sent,
      faults,
      accepted: 0,
      refused: {},
      success: 0,
      failures: {
        'replica lost': 0,
        'not started': 0,
        'registry 503': 0,
        'builder down': 0,
        'Redis down': 0,
        other: 0,
      },
      otherFailures: [],
      failureDetails: [],
      lost: [],
      pushedTwice: [],
      brokenTags: [],
      undelivered: [],
      ibsNotZero: [],
      contradicted: [],
      killedRunning,
    };
    const logOf = async (id: unknown): Promise<string> => {
      if (typeof id !== 'string') return '';
      const res = await fetch(`${anyLive(0).url}/logs/${id}`).catch(() => undefined);
      return res?.status === 200 ? await res.text() : '';
    };
    const dayStart = faults[0]?.startedAt ?? 0;
    const at = (ms: number): string => `${((ms - dayStart) / 1000).toFixed(1)} s`;
    /** Builds that took the full path (not a reuse answer), per image name: those may push. */
    const pushers = new Map<string, number>();
    const answeredTags = new Map<string, number>();
    const successAt: number[] = [];
    for (const s of sent) {
      const answer =
        s.record?.answer ?? (s.syncBody ? { status: Number(s.posted), body: s.syncBody } : undefined);
      if (s.id === undefined && answer === undefined && s.ibsExit === undefined) {
        const why = String(s.posted);
        report.refused[why] = (report.refused[why] ?? 0) + 1;
        continue;
      }
      report.accepted += 1;
      const told = typeof s.posted === 'number' && s.syncBody !== undefined ? s.posted : undefined;
      if (told !== undefined && s.record?.answer !== undefined && s.record.answer.status !== told) {
        report.contradicted.push(
          `${s.id ?? ''}: answered ${told}, record says ${String(s.record.answer.body.error)}`,
        );
      }
      if (s.mode === 'ibs' && s.ibsExit !== 0)
        report.ibsNotZero.push(`${s.during ?? ''}: ${String(s.posted)}`);
      if (s.id !== undefined && !finished(s.record)) {
        report.lost.push(
          `${s.id} (${s.mode}, ${s.record?.phase ?? 'no record'}, sent to ${s.replica} at ${at(s.sentAt)}, posted ${String(s.posted)})`,
        );
        continue;
      }
      if (answer === undefined) {
        if (s.ibsExit !== 0) report.lost.push(`${s.requestId} (${s.mode}, no answer)`);
        else report.success += 1;
        continue;
      }
      const imgLog = await logOf(answer.body.imageBuildLogId ?? s.record?.imageBuildLogId);
      const target = nameAndTag(String(answer.body.image ?? s.record?.image ?? ''), front.host);
      if (target !== undefined && !/reused, no build/.test(imgLog)) {
        pushers.set(target.name, (pushers.get(target.name) ?? 0) + 1);
      }
      if (answer.status === 200) {
        report.success += 1;
        const image = String(answer.body.image ?? s.record?.image ?? '');
        answeredTags.set(image, (answeredTags.get(image) ?? 0) + 1);
        if (s.record !== undefined) {
          successAt.push(Date.parse(s.record.startedAt) + (s.record.durationSeconds ?? 0) * 1000);
        }
      } else {
        const whole = imgLog || (await logOf(answer.body.logId ?? s.record?.gitCloneLogId));
        const cause = causeOf(answer, whole);
        // The log's lines that say what went wrong (the end of a CLI's log is its stack trace).
        const tail = whole
          .split('\n')
          .filter((line) => /\b503\b|unreachable|ERROR|error:|failed to|refused|Unavailable/i.test(line))
          .slice(-4)
          .map((line) => line.slice(0, 300))
          .join('\n');
        report.failures[cause] += 1;
        const started = s.record ? Date.parse(s.record.startedAt) : 0;
        const ended = started + (s.record?.durationSeconds ?? 0) * 1000;
        const when = s.record ? `${at(started)} to ${at(ended)}` : 'no record';
        const detail = `${s.mode} ${s.id ?? s.requestId} (${when}): ${String(answer.body.error).slice(0, 200)}\n${tail}`;
        report.failureDetails.push(`[${cause}] ${detail}`);
        if (cause === 'other') report.otherFailures.push(detail);
      }
    }
    for (const f of faults) {
      const after = successAt.filter((at) => at > f.endedAt).sort((a, b) => a - b)[0];
      if (after !== undefined) f.recoveryMs = after - f.endedAt;
    }

    // Pushed twice: manifest PUTs by tag beyond one per build that answered the tag.
    const puts = new Map<string, number>();
    const putTimes = new Map<string, number[]>();
    for (const r of front.requests) {
      const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(r.path);
      if (r.method !== 'PUT' || r.refused || r.status >= 300 || !m || m[2]?.startsWith('sha256:')) continue;
      const image = `${front.host}/${m[1] ?? ''}:${m[2] ?? ''}`;
      puts.set(image, (puts.get(image) ?? 0) + 1);
      putTimes.set(image, [...(putTimes.get(image) ?? []), r.at]);
    }
    for (const [image, n] of puts) {
      // A reuse answer pushes nothing: a tag may be pushed once per build of its image that took
      // the full path (docs/reuse.md: a registry that cannot confirm the image sends a request
      // there, and it pushes the same content again). More PUTs than that: one build pushed twice.
      const answered = answeredTags.get(image) ?? 0;
      const mayPush = pushers.get(nameAndTag(image, front.host)?.name ?? '') ?? 0;
      if (n > Math.max(1, mayPush)) {
        const builds: string[] = [];
        for (const s of sent) {
          if (!String(s.record?.image ?? '').startsWith(image.split(':').slice(0, -1).join(':'))) continue;
          // What its img log says of pushes and moves (the lines that explain a second PUT).
          const said = (await logOf(s.record?.imageBuildLogId))
            .split('\n')
            .filter((line) =>
              /pushing again|building on|reused|follow|retrying in|pushing manifest/i.test(line),
            )
            .map((line) => line.slice(0, 200));
          builds.push(
            `${s.mode} ${s.id ?? ''} on ${s.record?.builder ?? '?'} ${s.record?.status ?? ''} [${said.join(' | ')}]`,
          );
        }
        const times = (putTimes.get(image) ?? []).map(at);
        report.pushedTwice.push(
          `${image}: ${n} PUTs (at ${times.join(', ')}), ${answered} answers, ${mayPush} full-path builds; builds: ${builds.join('; ')}`,
        );
      }
    }
    // Broken tags: every answered tag's manifests and blobs, read from the registry itself.
    for (const image of answeredTags.keys()) {
      const ref = nameAndTag(image, front.host);
      if (ref === undefined) {
        report.brokenTags.push(`${image}: not an image of the registry`);
        continue;
      }
      const found = await reachable(stack.REGISTRY_ANON, ref.name, ref.tag);
      const missing = [...found].filter(([, status]) => status !== 200).map(([what, st]) => `${what}: ${st}`);
      if (![...found.keys()].some((w) => w.startsWith('blob '))) missing.push('no blob');
      if (missing.length > 0) report.brokenTags.push(`${image}: ${missing.join(', ')}`);
    }
    // Events: every finished build with a record has its build.finished delivered.
    const ids = sent.filter((s) => s.id !== undefined && finished(s.record)).map((s) => s.id as string);
    const delivered = (): Set<string> =>
      new Set(
        receiver.received
          .filter((e) => e.event.type.includes('build.finished'))
          .map((e) => String((e.event.data?.subject as { id?: unknown } | undefined)?.id ?? '')),
      );
    await within('every build.finished to be delivered', 90_000, async () =>
      ids.every((id) => delivered().has(id)),
    ).catch(() => undefined);
    const got = delivered();
    report.undelivered = ids.filter((id) => !got.has(id));
    return report;
  } finally {
    const logDir = process.env.IBS_FAULT_DAY_LOGS;
    if (logDir !== undefined) {
      for (const [i, r] of [...everyReplica, ...replicas].entries())
        writeFileSync(join(logDir, `${r.name}-${i}.log`), r.service.stdout() + r.service.stderr());
    }
    await stopReplicas(replicas);
    for (const step of cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
  }
}

/** The table the bench prints (and the test logs). */
export function dayTable(report: DayReport): string {
  const rows: [string, string][] = [
    ['requests sent', String(report.sent.length)],
    ['refused (not accepted)', JSON.stringify(report.refused)],
    ['accepted', String(report.accepted)],
    ['answered success', String(report.success)],
    ...Object.entries(report.failures).map(([cause, n]): [string, string] => [
      `failure: ${cause}`,
      String(n),
    ]),
    ['lost', String(report.lost.length)],
    ['pushed twice', String(report.pushedTwice.length)],
    ['broken tags', String(report.brokenTags.length)],
    ['undelivered events', String(report.undelivered.length)],
    ['ibs builds not ending 0', String(report.ibsNotZero.length)],
    ['sync answers the record contradicts', String(report.contradicted.length)],
    ...report.faults.map((f): [string, string] => [
      `recovery after ${f.fault}`,
      f.recoveryMs === undefined ? 'no success after it' : `${(f.recoveryMs / 1000).toFixed(1)} s`,
    ]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
