/**
 * What one ended build adds to its usage row (docs/usage.md), read from its finished record: the
 * row (tenant, repository, trigger), the hour, the counters, and what the saved time is looked up
 * by (the reused image's build key and digest, each cached step's identity) or kept by for later
 * builds (the image this build made, the steps it ran). Pure.
 */
import { createHash } from 'node:crypto';
import type { BuildRecord } from '../builds/types.js';
import { repositoryParts, repositoryPathOf } from '../rules/repository-parts.js';
import { hourOf, monthOf, type UsageRowKey } from './buckets.js';
import { COUNTERS, type CounterName } from './counters.js';

/** An ended build, and when it ended (ms). */
export interface EndedBuild {
  readonly record: BuildRecord;
  readonly endedAtMs: number;
}

/** A build's part of the usage, before its saved time is known. */
export interface Metering {
  readonly buildId: string;
  readonly row: UsageRowKey;
  readonly hour: number;
  readonly month: string;
  /** Every counter but `savedSeconds`. */
  readonly counters: Readonly<Record<Exclude<CounterName, 'savedSeconds'>, number>>;
  /** A reuse: the refs (build key, then digest) of the image it reused, to look its run time up by. */
  readonly reusedRefs: readonly string[];
  /** The identities of the steps BuildKit answered from its cache. */
  readonly cachedStepIds: readonly string[];
  /** A build that pushed: its refs and run time, kept for the reuses of its image. */
  readonly madeImage?: { readonly refs: readonly string[]; readonly runSeconds: number };
  /** The steps it ran, by identity, with their time (s), kept for the builds that find them cached. */
  readonly ranSteps: readonly { readonly id: string; readonly seconds: number }[];
}

/** The repository as usage names it (`host/owner/name`) and its tenant (the first path segment). */
export function usageRepository(repository: string): { repository: string; tenant: string } {
  const parts = repositoryParts(repository);
  if (parts === undefined) return { repository, tenant: 'unknown' };
  const path = repositoryPathOf(parts.path);
  const owner = path.split('/').find((segment) => segment !== '');
  return { repository: path === '' ? parts.host : `${parts.host}/${path}`, tenant: owner ?? parts.host };
}

/** A step's identity: its repository and its name as BuildKit gave it. */
export const stepId = (repository: string, name: string): string =>
  createHash('sha256').update(`${repository}\n${name}`).digest('hex').slice(0, 32);

const seconds = (ms: number | undefined): number => (ms === undefined ? 0 : Math.max(0, ms) / 1000);

/** The refs an image is kept and looked up by: its build key, then its digest. */
function imageRefs(record: BuildRecord): string[] {
  const digest = record.answer?.body.digest;
  return [
    ...(record.key?.key === undefined ? [] : [`key:${record.key.key}`]),
    ...(typeof digest === 'string' && digest !== '' ? [`digest:${digest}`] : []),
  ];
}

/** Run and queue time: a build never placed on a builder (ended while queued) only waited. */
function timesOf(ended: EndedBuild): { runSeconds: number; queuedSeconds: number } {
  const { record } = ended;
  const duration = Math.max(0, record.durationSeconds ?? record.elapsedSeconds);
  const sinceRecorded = Math.max(0, (ended.endedAtMs - Date.parse(record.startedAt)) / 1000);
  const unstarted =
    record.status !== 'success' && record.builder === undefined && record.stages === undefined;
  if (unstarted) return { runSeconds: 0, queuedSeconds: Math.max(duration, sinceRecorded) };
  return { runSeconds: duration, queuedSeconds: Math.max(0, sinceRecorded - duration) };
}

export function meteringOf(ended: EndedBuild): Metering {
  const { record } = ended;
  const { repository, tenant } = usageRepository(record.repository);
  const success = record.status === 'success';
  // A build that ran BuildKit reports its steps (an empty list included); a reuse never does.
  const reused = success && record.steps === undefined;
  const steps = record.steps ?? [];
  const ran = steps.filter((step) => !step.cached);
  const { runSeconds, queuedSeconds } = timesOf(ended);
  const refs = imageRefs(record);
  return {
    buildId: record.id,
    row: { tenant, repository, trigger: record.trigger ?? 'api' },
    hour: hourOf(ended.endedAtMs),
    month: monthOf(ended.endedAtMs),
    counters: {
      builds: 1,
      reused: reused ? 1 : 0,
      failed: success ? 0 : 1,
      queuedSeconds,
      runSeconds,
      executedStepSeconds: ran.reduce((sum, step) => sum + seconds(step.durationMs), 0),
      cachedSteps: steps.length - ran.length,
      totalSteps: steps.length,
      pushedBytes: (record.pushed?.platforms ?? []).reduce((sum, p) => sum + p.compressedBytes, 0),
    },
    reusedRefs: reused ? refs : [],
    cachedStepIds: steps.filter((step) => step.cached).map((step) => stepId(repository, step.name)),
    ...(success && !reused && refs.length > 0 ? { madeImage: { refs, runSeconds } } : {}),
    ranSteps: ran
      .filter((step) => step.durationMs !== undefined && step.error === undefined)
      .map((step) => ({ id: stepId(repository, step.name), seconds: seconds(step.durationMs) })),
  };
}

/** The counter vector of a metering with its saved time (COUNTERS' order). */
export const vectorWithSaved = (metering: Metering, savedSeconds: number): number[] =>
  COUNTERS.map(({ name }) => (name === 'savedSeconds' ? savedSeconds : metering.counters[name]));
