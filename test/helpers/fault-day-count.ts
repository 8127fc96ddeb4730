/**
 * The count of a day of faults (test/helpers/fault-day.ts), once every request has ended: what was
 * refused, answered, failed (and for which fault), lost or contradicted; each fault's recovery;
 * tags pushed twice or broken in the registry; build.finished events not delivered.
 */
import { stack } from './build-support.js';
import { parseImageString } from '../../src/registry/image-string.js';
import type { RegistryFront } from './registry-front.js';
import { within } from './replicas.js';
import { reachable } from './retention-support.js';
import { finished, type Cause, type DayReport, type FaultWindow, type Sent } from './fault-day-types.js';
import type { Stage } from './fault-day-stage.js';
import type { DayTraffic } from './fault-day-traffic.js';

type Answer = { status: number; body: Record<string, unknown> };

/** What the count of the requests gathers beside the report. */
interface Tally {
  readonly report: DayReport;
  readonly front: RegistryFront;
  /** Builds that took the full path (not a reuse answer), per image name: those may push. */
  readonly pushers: Map<string, number>;
  readonly answeredTags: Map<string, number>;
  /** When each successful build ended (ms since the epoch). */
  readonly successAt: number[];
  /** A log's text read on a live replica ('' when none). */
  readonly logOf: (id: unknown) => Promise<string>;
  /** A time as seconds from the first fault. */
  readonly at: (ms: number) => string;
}

export function causeOf(answer: Answer | undefined, logTail = ''): Cause {
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

/** The tag of an answered image (`registry/name:tag`), with its name. */
function nameAndTag(image: string, registry: string): { name: string; tag: string } | undefined {
  const ref = parseImageString(image, [registry])?.ref;
  return ref?.registry === registry ? { name: ref.name, tag: ref.tag } : undefined;
}

/** The day's report: every request accounted for, then the registry and the receiver read. */
export async function countDay(
  stage: Stage,
  traffic: DayTraffic,
  struck: { faults: FaultWindow[]; killedRunning: string[] },
): Promise<DayReport> {
  const { faults } = struck;
  const dayStart = faults[0]?.startedAt ?? 0;
  const tally: Tally = {
    report: emptyReport(traffic.sent, struck),
    front: stage.front,
    pushers: new Map(),
    answeredTags: new Map(),
    successAt: [],
    logOf: async (id) => {
      if (typeof id !== 'string') return '';
      const res = await fetch(`${traffic.anyLive(0).url}/logs/${id}`).catch(() => undefined);
      return res?.status === 200 ? await res.text() : '';
    },
    at: (ms) => `${((ms - dayStart) / 1000).toFixed(1)} s`,
  };
  for (const s of traffic.sent) await accountFor(s, tally);
  for (const f of faults) {
    const after = tally.successAt.filter((at) => at > f.endedAt).sort((a, b) => a - b)[0];
    if (after !== undefined) f.recoveryMs = after - f.endedAt;
  }
  await countPushedTwice(tally, traffic.sent);
  await countBrokenTags(tally);
  tally.report.undelivered = await undelivered(stage, traffic.sent);
  return tally.report;
}

function emptyReport(
  sent: readonly Sent[],
  struck: { faults: FaultWindow[]; killedRunning: string[] },
): DayReport {
  return {
    sent,
    faults: struck.faults,
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
    killedRunning: struck.killedRunning,
  };
}

/** One request counted: refused, lost, answered success or failed (and why), who may have pushed. */
async function accountFor(s: Sent, c: Tally): Promise<void> {
  const { report } = c;
  const answer: Answer | undefined =
    s.record?.answer ?? (s.syncBody ? { status: Number(s.posted), body: s.syncBody } : undefined);
  if (s.id === undefined && answer === undefined && s.ibsExit === undefined) {
    const why = String(s.posted);
    report.refused[why] = (report.refused[why] ?? 0) + 1;
    return;
  }
  report.accepted += 1;
  const told = typeof s.posted === 'number' && s.syncBody !== undefined ? s.posted : undefined;
  if (told !== undefined && s.record?.answer !== undefined && s.record.answer.status !== told) {
    report.contradicted.push(
      `${s.id ?? ''}: answered ${told}, record says ${String(s.record.answer.body.error)}`,
    );
  }
  if (s.mode === 'ibs' && s.ibsExit !== 0) report.ibsNotZero.push(`${s.during ?? ''}: ${String(s.posted)}`);
  if (s.id !== undefined && !finished(s.record)) {
    report.lost.push(
      `${s.id} (${s.mode}, ${s.record?.phase ?? 'no record'}, sent to ${s.replica} at ${c.at(s.sentAt)}, posted ${String(s.posted)})`,
    );
    return;
  }
  if (answer === undefined) {
    if (s.ibsExit !== 0) report.lost.push(`${s.requestId} (${s.mode}, no answer)`);
    else report.success += 1;
    return;
  }
  const imgLog = await c.logOf(answer.body.imageBuildLogId ?? s.record?.imageBuildLogId);
  const target = nameAndTag(String(answer.body.image ?? s.record?.image ?? ''), c.front.host);
  if (target !== undefined && !/reused, no build/.test(imgLog)) {
    c.pushers.set(target.name, (c.pushers.get(target.name) ?? 0) + 1);
  }
  if (answer.status === 200) {
    report.success += 1;
    const image = String(answer.body.image ?? s.record?.image ?? '');
    c.answeredTags.set(image, (c.answeredTags.get(image) ?? 0) + 1);
    if (s.record !== undefined) {
      c.successAt.push(Date.parse(s.record.startedAt) + (s.record.durationSeconds ?? 0) * 1000);
    }
  } else await countFailure(s, answer, imgLog, c);
}

/** A failed build: its cause, and a line of detail with its log's telling lines. */
async function countFailure(s: Sent, answer: Answer, imgLog: string, c: Tally): Promise<void> {
  const whole = imgLog || (await c.logOf(answer.body.logId ?? s.record?.gitCloneLogId));
  const cause = causeOf(answer, whole);
  // The log's lines that say what went wrong (the end of a CLI's log is its stack trace).
  const tail = whole
    .split('\n')
    .filter((line) => /\b503\b|unreachable|ERROR|error:|failed to|refused|Unavailable/i.test(line))
    .slice(-4)
    .map((line) => line.slice(0, 300))
    .join('\n');
  c.report.failures[cause] += 1;
  const started = s.record ? Date.parse(s.record.startedAt) : 0;
  const ended = started + (s.record?.durationSeconds ?? 0) * 1000;
  const when = s.record ? `${c.at(started)} to ${c.at(ended)}` : 'no record';
  const detail = `${s.mode} ${s.id ?? s.requestId} (${when}): ${String(answer.body.error).slice(0, 200)}\n${tail}`;
  c.report.failureDetails.push(`[${cause}] ${detail}`);
  if (cause === 'other') c.report.otherFailures.push(detail);
}

/** Manifest PUTs by tag that the registry took, with their times, per `registry/name:tag`. */
function manifestPuts(front: RegistryFront): Map<string, number[]> {
  const puts = new Map<string, number[]>();
  for (const r of front.requests) {
    const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(r.path);
    if (r.method !== 'PUT' || r.refused || r.status >= 300 || !m || m[2]?.startsWith('sha256:')) continue;
    const image = `${front.host}/${m[1] ?? ''}:${m[2] ?? ''}`;
    puts.set(image, [...(puts.get(image) ?? []), r.at]);
  }
  return puts;
}

/** Pushed twice: manifest PUTs by tag beyond one per build that answered the tag. */
async function countPushedTwice(c: Tally, sent: readonly Sent[]): Promise<void> {
  for (const [image, times] of manifestPuts(c.front)) {
    const n = times.length;
    // A reuse answer pushes nothing: a tag may be pushed once per build of its image that took
    // the full path (docs/reuse.md: a registry that cannot confirm the image sends a request
    // there, and it pushes the same content again). More PUTs than that: one build pushed twice.
    const answered = c.answeredTags.get(image) ?? 0;
    const mayPush = c.pushers.get(nameAndTag(image, c.front.host)?.name ?? '') ?? 0;
    if (n > Math.max(1, mayPush)) {
      const builds = await pushHistory(c, sent, image);
      c.report.pushedTwice.push(
        `${image}: ${n} PUTs (at ${times.map(c.at).join(', ')}), ${answered} answers, ${mayPush} full-path builds; builds: ${builds.join('; ')}`,
      );
    }
  }
}

/** The builds of `image`'s repository, each with what its img log says of pushes and moves. */
async function pushHistory(c: Tally, sent: readonly Sent[], image: string): Promise<string[]> {
  const builds: string[] = [];
  for (const s of sent) {
    if (!String(s.record?.image ?? '').startsWith(image.split(':').slice(0, -1).join(':'))) continue;
    // What its img log says of pushes and moves (the lines that explain a second PUT).
    const said = (await c.logOf(s.record?.imageBuildLogId))
      .split('\n')
      .filter((line) => /pushing again|building on|reused|follow|retrying in|pushing manifest/i.test(line))
      .map((line) => line.slice(0, 200));
    builds.push(
      `${s.mode} ${s.id ?? ''} on ${s.record?.builder ?? '?'} ${s.record?.status ?? ''} [${said.join(' | ')}]`,
    );
  }
  return builds;
}

/** Broken tags: every answered tag's manifests and blobs, read from the registry itself. */
async function countBrokenTags(c: Tally): Promise<void> {
  for (const image of c.answeredTags.keys()) {
    const ref = nameAndTag(image, c.front.host);
    if (ref === undefined) {
      c.report.brokenTags.push(`${image}: not an image of the registry`);
      continue;
    }
    const found = await reachable(stack.REGISTRY_ANON, ref.name, ref.tag);
    const missing = [...found].filter(([, status]) => status !== 200).map(([what, st]) => `${what}: ${st}`);
    if (![...found.keys()].some((w) => w.startsWith('blob '))) missing.push('no blob');
    if (missing.length > 0) c.report.brokenTags.push(`${image}: ${missing.join(', ')}`);
  }
}

/** The finished builds whose build.finished the receiver has not got (waited for up to 90 s). */
async function undelivered(stage: Stage, sent: readonly Sent[]): Promise<string[]> {
  const ids = sent.filter((s) => s.id !== undefined && finished(s.record)).map((s) => s.id as string);
  const delivered = (): Set<string> =>
    new Set(
      stage.receiver.received
        .filter((e) => e.event.type.includes('build.finished'))
        .map((e) => String((e.event.data?.subject as { id?: unknown } | undefined)?.id ?? '')),
    );
  await within('every build.finished to be delivered', 90_000, async () =>
    ids.every((id) => delivered().has(id)),
  ).catch(() => undefined);
  const got = delivered();
  return ids.filter((id) => !got.has(id));
}
