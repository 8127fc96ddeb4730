/**
 * The accounts of a storm day (test/helpers/storm-day.ts): every build sent is accepted or refused
 * with a reason, and every accepted one ends with one answer that its record and its events agree
 * on. Counted: requests, accepted, succeeded, failed by code, lost (never ended), run twice to
 * different images, broken tags, undelivered events, ibs not ending 0, contradicting answers, the
 * 503s without Retry-After, each fault's recovery and the longest stretch of 503s a caller saw.
 */
import type { BuildRecord } from '../../src/builds/types.js';
import type { Delivery } from '../../src/events/types.js';
import { parseImageString } from '../../src/registry/image-string.js';
import { stack } from './build-support.js';
import { causeOf } from './fault-day.js';
import type { EventReceiver } from './event-receiver.js';
import { within } from './replicas.js';
import { reachable } from './retention-support.js';

export interface StormBuild {
  readonly requestId: string;
  /** Which repository (modulo their count). */
  readonly repo: number;
  readonly sentAt: number;
  /** The fault striking when it was sent ('none': before the first). */
  readonly during: string;
  /** POST /build requests sent for it (a 503 or a broken connection: sent again, same key). */
  posts: number;
  noAnswer: number;
  unavailable: number;
  /** 503s answered without Retry-After. */
  noRetryAfter: number;
  /** Each run of 503s this caller saw: the fault at its first, and how long until an answer. */
  stretches: { during: string; ms: number }[];
  id?: string;
  refused?: string;
  record?: BuildRecord;
}

export interface StormFault {
  readonly fault: string;
  readonly startedAt: number;
  endedAt?: number;
  /** What the fault measured itself (a failover: ms from the kill to the promotion). */
  innerMs?: number;
  /** Ms from its end to the first build that succeeded after it. */
  recoveryMs?: number;
  /** The longest run of 503s that began during it. */
  longest503Ms?: number;
}

export interface StormReport {
  readonly faults: readonly StormFault[];
  requests: number;
  builds: number;
  accepted: number;
  refused: Record<string, number>;
  succeeded: number;
  failed: Record<string, number>;
  failureDetails: string[];
  lost: string[];
  twice: string[];
  broken: string[];
  undelivered: string[];
  ibsNotZero: string[];
  contradicted: string[];
  noRetryAfter: number;
  /** Requests answered the id of an identical build in flight, which they follow. */
  followed: number;
  answered503: number;
  longest503Ms: number;
  rollingExits: readonly (number | string)[];
}

export interface StormInput {
  readonly builds: readonly StormBuild[];
  readonly faults: StormFault[];
  readonly rollingExits: readonly (number | string)[];
  readonly receiver: EventReceiver;
  readonly ibs: readonly { during: string; exit: number | string; stderr: string }[];
  readonly anyReplica: () => { readonly url: string };
}

const finishedAt = (r: BuildRecord): number => Date.parse(r.startedAt) + (r.durationSeconds ?? 0) * 1000;

/**
 * The service's own account of the build.finished deliveries the receiver never got: recorded
 * but not delivered (each with its state and the receiver's attempts), or none recorded.
 */
async function serviceAccount(input: StormInput): Promise<string> {
  const got = new Set(input.receiver.received.map((e) => e.webhookId));
  try {
    const res = await fetch(`${input.anyReplica().url}/events/deliveries`);
    const { deliveries } = (await res.json()) as { deliveries: Delivery[] };
    const missing = deliveries.filter((d) => d.type.includes('build.finished') && !got.has(d.id));
    if (missing.length === 0) return 'no build.finished delivery of the service is missing at the receiver';
    const states = missing.map(
      (d) =>
        `${d.id} ${d.status} after ${d.attempts} attempts (last ${String(d.lastStatus ?? 'none')}, ` +
        `${input.receiver.attemptsOf(d.id)} reached the receiver)`,
    );
    return `recorded, not received: ${states.join(', ')}`;
  } catch (err) {
    return `the service's deliveries unread: ${String(err)}`;
  }
}

/** The fault striking when `record` ended, or the last one before it ('before the first fault'). */
function endedDuring(faults: readonly StormFault[], record: BuildRecord): string {
  const at = finishedAt(record);
  const fault = faults.findLast((f) => f.startedAt <= at);
  if (fault === undefined) return 'before the first fault';
  const after = fault.endedAt !== undefined && at > fault.endedAt;
  return `${after ? 'after' : 'during'} ${fault.fault}, ${Math.round(at - fault.startedAt)} ms after it began`;
}
const bodyOf = (r: BuildRecord | undefined): Record<string, unknown> => r?.answer?.body ?? {};

/** Per build id, what each delivered build.finished said: its status and digest. */
function deliveredBy(receiver: EventReceiver): Map<string, { status: string; digest: string }[]> {
  const out = new Map<string, { status: string; digest: string }[]>();
  for (const e of receiver.received) {
    if (!e.event.type.includes('build.finished')) continue;
    const data = e.event.data as { subject?: { id?: unknown }; customData?: Record<string, unknown> };
    const id = String(data.subject?.id ?? '');
    const said = {
      status: String(data.customData?.status ?? ''),
      digest: String(data.customData?.digest ?? ''),
    };
    out.set(id, [...(out.get(id) ?? []), said]);
  }
  return out;
}

/** The events and the record of one build: each disagreement, and its digests. */
function agreement(b: StormBuild, events: readonly { status: string; digest: string }[]) {
  const record = b.record as BuildRecord;
  const digests = new Set(events.map((e) => e.digest).filter((d) => d !== ''));
  const answered = String(bodyOf(record).digest ?? '');
  if (answered !== '') digests.add(answered);
  const statuses = new Set(events.map((e) => e.status));
  const contradictions: string[] = [];
  if (statuses.size > 1) contradictions.push(`events say ${[...statuses].join(' and ')}`);
  if (events.length > 0 && !statuses.has(String(record.status)))
    contradictions.push(`record says ${String(record.status)}, events ${[...statuses].join(', ')}`);
  if ((record.answer?.status === 200) !== (record.status === 'success'))
    contradictions.push(`answered ${String(record.answer?.status)} with status ${String(record.status)}`);
  return { digests, contradictions };
}

export async function countStorm(input: StormInput): Promise<StormReport> {
  const { builds } = input;
  const report = emptyStormReport(input);
  const finished = builds.filter((b) => b.record?.phase === 'finished');
  const delivered = await deliveredOnceDone(
    input.receiver,
    finished.map((b) => b.id as string),
  );
  const images = new Set<string>();
  const callers = new Map<string, number>();
  for (const b of builds) if (b.id !== undefined) callers.set(b.id, (callers.get(b.id) ?? 0) + 1);
  // A request that follows an identical build in flight is answered that build's id (docs/behaviour.md).
  report.followed = [...callers.values()].filter((n) => n > 1).reduce((sum, n) => sum + n - 1, 0);
  for (const b of builds) countBuild(report, b, delivered, images);
  if (report.undelivered.length > 0) {
    const account = await serviceAccount(input);
    report.undelivered = report.undelivered.map((line) => `${line}; ${account}`);
  }
  await countBroken(report, images);
  countRecoveries(input, finished);
  return report;
}

/** The report before any build is counted: the figures read straight off the builds. */
function emptyStormReport(input: StormInput): StormReport {
  const { builds, faults } = input;
  return {
    faults,
    requests: builds.reduce((n, b) => n + b.posts, 0) + input.ibs.length,
    builds: builds.length + input.ibs.length,
    accepted: 0,
    refused: {},
    succeeded: 0,
    failed: {},
    failureDetails: [],
    lost: [],
    twice: [],
    broken: [],
    undelivered: [],
    ibsNotZero: input.ibs
      .filter((r) => r.exit !== 0)
      .map((r) => `${r.during}: ${String(r.exit)} ${r.stderr.slice(-400)}`),
    contradicted: [],
    noRetryAfter: builds.reduce((n, b) => n + b.noRetryAfter, 0),
    followed: 0,
    answered503: builds.reduce((n, b) => n + b.unavailable, 0),
    longest503Ms: Math.max(0, ...builds.flatMap((b) => b.stretches.map((s) => s.ms))),
    rollingExits: input.rollingExits,
  };
}

/** What the receiver got, once it has every build.finished of `ids` (or two minutes have passed). */
async function deliveredOnceDone(
  receiver: EventReceiver,
  ids: readonly string[],
): Promise<Map<string, { status: string; digest: string }[]>> {
  await within('every build.finished to be delivered', 120_000, async () => {
    const got = deliveredBy(receiver);
    return ids.every((id) => got.has(id));
  }).catch(() => undefined);
  return deliveredBy(receiver);
}

/** One build counted: refused, lost, or finished (its events, its agreement, success or failure). */
function countBuild(
  report: StormReport,
  b: StormBuild,
  delivered: Map<string, { status: string; digest: string }[]>,
  images: Set<string>,
): void {
  if (b.id === undefined) {
    const why = b.refused ?? 'no answer';
    report.refused[why] = (report.refused[why] ?? 0) + 1;
    return;
  }
  report.accepted += 1;
  const record = b.record;
  if (record?.phase !== 'finished') {
    report.lost.push(`${b.id} (${record?.phase ?? 'no record'}, sent during ${b.during})`);
    return;
  }
  const events = delivered.get(b.id) ?? [];
  if (events.length === 0)
    report.undelivered.push(`${b.id} (sent during ${b.during}, ended ${endedDuring(report.faults, record)})`);
  const { digests, contradictions } = agreement(b, events);
  if (digests.size > 1) report.twice.push(`${b.id}: ${[...digests].join(', ')}`);
  for (const c of contradictions) report.contradicted.push(`${b.id}: ${c}`);
  if (record.status === 'success') {
    report.succeeded += 1;
    images.add(String(bodyOf(record).image ?? record.image));
  } else {
    const code = String(bodyOf(record).code ?? causeOf(record.answer));
    report.failed[code] = (report.failed[code] ?? 0) + 1;
    report.failureDetails.push(
      `${code} ${b.id} (sent during ${b.during}): ${String(record.error).slice(0, 240)}`,
    );
  }
}

/** Broken images: every answered image's manifests and blobs, read from the registry itself. */
async function countBroken(report: StormReport, images: ReadonlySet<string>): Promise<void> {
  for (const image of images) {
    const ref = parseImageString(image, [stack.REGISTRY_ANON])?.ref;
    if (ref === undefined) throw new Error(`not an image reference: ${image}`);
    const found = await reachable(ref.registry, ref.name, ref.tag);
    const missing = [...found].filter(([, status]) => status !== 200).map(([what, st]) => `${what}: ${st}`);
    if (![...found.keys()].some((w) => w.startsWith('blob '))) missing.push('no blob');
    if (missing.length > 0) report.broken.push(`${image}: ${missing.join(', ')}`);
  }
}

/** Each fault's recovery (to the first success that ended after it) and its longest run of 503s. */
function countRecoveries(input: StormInput, finished: readonly StormBuild[]): void {
  const successes = finished
    .filter((b) => b.record?.status === 'success')
    .map((b) => finishedAt(b.record as BuildRecord));
  for (const f of input.faults) {
    const end = f.endedAt ?? f.startedAt;
    const after = successes.filter((at) => at > end).sort((a, b) => a - b)[0];
    if (after !== undefined) f.recoveryMs = after - end;
    f.longest503Ms = Math.max(
      0,
      ...input.builds.flatMap((b) => b.stretches.filter((s) => s.during === f.fault).map((s) => s.ms)),
    );
  }
}

const seconds = (ms: number | undefined): string =>
  ms === undefined ? 'none' : `${(ms / 1000).toFixed(1)} s`;

/** The table the bench prints and the test logs. */
export function stormTable(report: StormReport): string {
  const rows: [string, string][] = [
    ['requests (POST /build, ibs)', String(report.requests)],
    ['builds sent', String(report.builds)],
    ['accepted', String(report.accepted)],
    ['refused', JSON.stringify(report.refused)],
    ['accepted as followers of a build in flight', String(report.followed)],
    ['succeeded', String(report.succeeded)],
    ...Object.entries(report.failed).map(([code, n]): [string, string] => [`failed: ${code}`, String(n)]),
    ['lost', String(report.lost.length)],
    ['run twice to different images', String(report.twice.length)],
    ['broken tags', String(report.broken.length)],
    ['undelivered build.finished', String(report.undelivered.length)],
    ['ibs not ending 0', String(report.ibsNotZero.length)],
    ['answers that contradict each other', String(report.contradicted.length)],
    ['503s answered (retried)', String(report.answered503)],
    ['503s without Retry-After', String(report.noRetryAfter)],
    ['longest stretch of 503s a caller saw', seconds(report.longest503Ms)],
    ['rolling update: exit codes', report.rollingExits.join(', ')],
    ...report.faults.flatMap((f): [string, string][] => [
      [
        `${f.fault}: lasted`,
        `${seconds((f.endedAt ?? f.startedAt) - f.startedAt)}${f.innerMs === undefined ? '' : ` (promoted after ${seconds(f.innerMs)})`}`,
      ],
      [`${f.fault}: recovery`, f.recoveryMs === undefined ? 'no success after it' : seconds(f.recoveryMs)],
      [`${f.fault}: longest 503s`, seconds(f.longest503Ms)],
    ]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** Every bad count's lines (lost, twice, broken, undelivered, ibs not 0, contradicted, 503 without Retry-After). */
export function stormBad(report: StormReport): string[] {
  return [
    ...report.lost.map((l) => `lost: ${l}`),
    ...report.twice.map((l) => `run twice: ${l}`),
    ...report.broken.map((l) => `broken tag: ${l}`),
    ...report.undelivered.map((l) => `undelivered: ${l}`),
    ...report.ibsNotZero.map((l) => `ibs not 0: ${l}`),
    ...report.contradicted.map((l) => `contradicted: ${l}`),
    ...(report.noRetryAfter > 0 ? [`503 without Retry-After: ${report.noRetryAfter}`] : []),
  ];
}
