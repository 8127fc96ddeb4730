/**
 * A build as a registry keeps it (plain JSON: the Redis registry stores it as is), how it matches a
 * GET /builds filter, and the record GET /builds lists. Pure: shared by the embedded and Redis registries.
 */
import { randomUUID } from 'node:crypto';
import type { RequestedBy } from '../rules/caller.js';
import { repositoryTenant } from '../rules/tenants.js';
import type {
  BuildFilter,
  BuildOutcome,
  BuildRecord,
  BuildTrigger,
  NewBuild,
  BuildDetails,
  PlatformBuilder,
  RunningPhase,
} from './types.js';

/** One build as a registry keeps it; `startedAtMs` is milliseconds since the epoch. */
export interface BuildEntry {
  readonly id: string;
  readonly requestId: string;
  readonly trigger?: BuildTrigger;
  /** Kept to drop the key with the record (never listed). */
  readonly idempotencyKey?: string;
  readonly requestedBy?: RequestedBy;
  readonly repository: string;
  /** Its tenant as the queue named it (docs/queue.md); absent: its repository's owner. */
  readonly tenant?: string;
  readonly startedAtMs: number;
  branch?: string;
  commit?: string;
  image: string;
  phase: RunningPhase | 'finished';
  gitCloneLogId?: string;
  imageBuildLogId?: string;
  builder?: string;
  builders?: readonly PlatformBuilder[];
  waiters: number;
  /** The token of the last waiters change applied (a repeat of it is not counted again; never listed). */
  waitersToken?: string;
  details?: BuildDetails;
  outcome?: BuildOutcome;
  /** When it finished (ms since the epoch): it leaves the history `historyDays` later. */
  finishedAtMs?: number;
}

const seconds = (ms: number): number => Math.round(ms) / 1000;

/** `queued`, `running` (started, not finished) or the metric status it ended with. */
function statusOf(entry: BuildEntry): string {
  if (entry.outcome !== undefined) return entry.outcome.status;
  return entry.phase === 'queued' ? 'queued' : 'running';
}

/** The tenant of a build: as the queue named it, else its repository's owner (docs/queue.md). */
const tenantOfEntry = (entry: Pick<BuildEntry, 'tenant' | 'repository'>): string =>
  entry.tenant ?? repositoryTenant(entry.repository);

/** Each field a build is found by, and its value (a build of POST /build has the trigger `api`). */
export function indexedValues(entry: BuildEntry): [string, string][] {
  const out: [string, string][] = [
    ['status', statusOf(entry)],
    ['repository', entry.repository],
    ['request', entry.requestId],
    ['trigger', entry.trigger ?? 'api'],
    ['tenant', tenantOfEntry(entry)],
  ];
  if (entry.branch !== undefined) out.push(['branch', entry.branch]);
  if (entry.requestedBy !== undefined) out.push(['caller', entry.requestedBy.subject]);
  return out;
}

/** The fields a filter asks for and their values, as indexedValues names them. */
export function filterValues(filter: BuildFilter): [string, string][] {
  const out: [string, string][] = [];
  if (filter.status !== undefined) out.push(['status', filter.status]);
  if (filter.repository !== undefined) out.push(['repository', filter.repository]);
  if (filter.requestId !== undefined) out.push(['request', filter.requestId]);
  if (filter.trigger !== undefined) out.push(['trigger', filter.trigger]);
  if (filter.branch !== undefined) out.push(['branch', filter.branch]);
  if (filter.caller !== undefined) out.push(['caller', filter.caller]);
  if (filter.tenant !== undefined) out.push(['tenant', filter.tenant]);
  return out;
}

export function matchesFilter(entry: BuildEntry, filter: BuildFilter): boolean {
  const values = new Map(indexedValues(entry));
  return filterValues(filter).every(([field, value]) => values.get(field) === value);
}

/** The record GET /builds lists, `at` the time of the listing (elapsed time of a running build). */
export function toRecord(entry: BuildEntry, at: number): BuildRecord {
  const outcome = entry.outcome;
  return {
    id: entry.id,
    requestId: entry.requestId,
    ...(entry.trigger === undefined ? {} : { trigger: entry.trigger }),
    ...(entry.requestedBy === undefined ? {} : { requestedBy: entry.requestedBy }),
    repository: entry.repository,
    tenant: tenantOfEntry(entry),
    ...(entry.branch === undefined ? {} : { branch: entry.branch }),
    ...(entry.commit === undefined ? {} : { commit: entry.commit }),
    image: entry.image,
    phase: entry.phase,
    startedAt: new Date(entry.startedAtMs).toISOString(),
    elapsedSeconds:
      outcome === undefined ? seconds(Math.max(0, at - entry.startedAtMs)) : outcome.durationSeconds,
    ...(entry.gitCloneLogId === undefined ? {} : { gitCloneLogId: entry.gitCloneLogId }),
    ...(entry.imageBuildLogId === undefined ? {} : { imageBuildLogId: entry.imageBuildLogId }),
    ...(entry.builder === undefined ? {} : { builder: entry.builder }),
    ...(entry.builders === undefined ? {} : { builders: entry.builders }),
    waiters: entry.waiters,
    ...entry.details,
    ...(outcome === undefined
      ? {}
      : {
          status: outcome.status,
          durationSeconds: outcome.durationSeconds,
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
          ...(outcome.answer === undefined ? {} : { answer: outcome.answer }),
        }),
  };
}

/** The entry of a build just admitted: a new `bld-<uuid>` id, phase `cloning`, one waiter. */
export function newBuildEntry(build: NewBuild, startedAtMs: number): BuildEntry {
  return {
    id: `bld-${randomUUID()}`,
    requestId: build.requestId,
    ...(build.trigger === undefined ? {} : { trigger: build.trigger }),
    ...(build.idempotencyKey === undefined ? {} : { idempotencyKey: build.idempotencyKey }),
    ...(build.requestedBy === undefined ? {} : { requestedBy: build.requestedBy }),
    repository: build.repository,
    tenant: build.tenant ?? repositoryTenant(build.repository),
    startedAtMs,
    ...(build.branch === undefined ? {} : { branch: build.branch }),
    image: build.image,
    ...(build.builder === undefined ? {} : { builder: build.builder }),
    ...(build.builders === undefined ? {} : { builders: build.builders }),
    phase: build.queued === true ? 'queued' : 'cloning',
    waiters: 1,
  };
}
