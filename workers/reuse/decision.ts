/**
 * The decision of a build for its key (docs/reuse.md), one type from the job to the worker:
 * `reuse` (the tag written from the key's recorded image: no CLI, no BuildKit), `wait` (a build
 * with the same key is in flight, here or on another replica: wait for it) or `build` (saying why
 * in the img log). A failure of the reuse path never fails the request: it is logged and the build runs.
 */
import type { ImageSource } from '../../src/rules/image-labels.js';
import { reasonOf } from '../../src/errors/errors.js';
import {
  STOPPED_WAITING,
  type FollowedBuild,
  type FollowedOutcome,
  type HeldLease,
} from '../leases/leases.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { buildKeyTag } from './build-key.js';
import type { Keyed } from './checkout-key.js';
import type { InFlightBuild, OwnedBuild } from './in-flight.js';
import { registryAccess, type ReuseDeps } from './reuse-deps.js';
import { describeRebuilt, withFiles, type FilesOf, type RebuiltInput } from './rebuilt-inputs.js';
import { recordKey, reuseByKey } from './reuse-image.js';
import type { TaggedImageTarget } from '../../src/rules/image-target.js';

/**
 * What a build does for its key. `lease`: this build owns its key across replicas; the job
 * releases it with its outcome. A `build` without `keyed` has no key (its reason is logged).
 */
export type Decision =
  | { readonly kind: 'reuse'; readonly keyed: Keyed; readonly digest: string; readonly lease?: HeldLease }
  | { readonly kind: 'wait'; readonly keyed: Keyed; readonly followed: FollowedBuild }
  | {
      readonly kind: 'build';
      readonly keyed?: Keyed;
      readonly lease?: HeldLease;
      /** With a key: the inputs changed since the last build (undefined: no earlier build known). */
      readonly changed?: readonly RebuiltInput[];
    };

/** What the job knows when it decides. */
export interface DecisionInput {
  readonly plan: BuildPlan;
  readonly deps: Pick<StepDeps, 'config' | 'metrics'> & { readonly reuse: ReuseDeps };
  /** Where the image comes from (the clone's): the labels of a reuse. */
  readonly source: ImageSource;
  readonly target: TaggedImageTarget;
  readonly log: CommandLogWriter;
  /** This build in the in-flight map (the key is added to it). */
  readonly own: OwnedBuild<BuildResult>;
  /** Whether a build in flight with the same key may be followed. */
  readonly followAllowed: boolean;
  /** The files under the read set's changed paths, when the commit's trees can tell them. */
  readonly filesOf?: FilesOf;
}

/** The time since `startedMs` (performance.now()) as the img log says it: `1.25 s`. */
export const formatElapsed = (startedMs: number): string =>
  `${((performance.now() - startedMs) / 1000).toFixed(2)} s`;

/** The one "reused" line of the img log: the key's earlier image answers this request. */
function logReused(
  log: CommandLogWriter,
  reused: { readonly earlier: string; readonly digest: string; readonly notes: readonly string[] },
  key: string,
  how: string,
  image: string,
): void {
  for (const note of reused.notes) log.write(note);
  log.write(
    `inputs unchanged since ${reused.earlier}, key ${key}: reused, no build (${how}); ${image} is ${reused.digest}\n`,
  );
}

/** A build in this process's in-flight map, followed: one more waiter of it while waiting. */
function followInProcess(build: InFlightBuild<BuildResult>): FollowedBuild {
  return {
    where: 'here',
    wait(signal) {
      const waiter = build.follow();
      if (waiter === undefined) return undefined;
      let leave = (): void => undefined;
      const stopped = new Promise<FollowedOutcome>((resolve) => {
        leave = () => {
          waiter.leave(signal.reason);
          resolve({ ok: false, why: STOPPED_WAITING });
        };
        if (signal.aborted) leave();
        else signal.addEventListener('abort', leave, { once: true });
      });
      const settled = build.result.then(
        (built): FollowedOutcome => ({ ok: true, built }),
        (err: unknown): FollowedOutcome => ({
          ok: false,
          why: `following the build with the same key failed (${reasonOf(err)})`,
        }),
      );
      return Promise.race([settled, stopped]).finally(() => {
        signal.removeEventListener('abort', leave);
        waiter.leave();
      });
    },
  };
}

const recentId = (input: Pick<DecisionInput, 'plan' | 'source' | 'target'>): string =>
  input.target.recentId(input.plan.repository, input.source.branch);

/**
 * A build with the same key to follow (in this process first, then on another replica), else this
 * build owns the key: in the in-flight map, and across replicas while `lease` is held.
 */
async function followOrOwn(
  input: DecisionInput,
  keyed: Keyed,
): Promise<Extract<Decision, { kind: 'wait' }> | { readonly kind: 'own'; readonly lease?: HeldLease }> {
  const { deps, log, target } = input;
  const inFlightId = target.keyInFlightId(keyed.key);
  const other = deps.reuse.inFlight.find(inFlightId);
  if (other !== undefined && other !== input.own && input.followAllowed) {
    log.write(`# a build with the same key is in flight for ${target.repository}: waiting for it\n`);
    return { kind: 'wait', keyed, followed: followInProcess(other) };
  }
  input.own.alias(inFlightId);
  try {
    const role = await deps.reuse.leases.holdOrFollow(inFlightId, { follow: input.followAllowed });
    if (role.kind === 'follow') {
      log.write(
        `# a build with the same key runs on another replica for ${target.repository}: waiting for it\n`,
      );
      return { kind: 'wait', keyed, followed: role.build };
    }
    if (role.kind === 'hold') return { kind: 'own', lease: role.lease };
  } catch (err) {
    log.write(`# not shared with other replicas (${reasonOf(err)})\n`);
  }
  return { kind: 'own' };
}

/** A request answered with an earlier image: counted here, the one place reuses are counted. O(1). */
export function countReuse(deps: { readonly metrics: Pick<StepDeps['metrics'], 'buildReusesTotal'> }): void {
  deps.metrics.buildReusesTotal.inc();
}

/**
 * Reuse by key, decided here only: the tag of `input.target` written from the image recorded
 * under `key` (labels of `input.source`), logged and counted; its digest, or undefined when the
 * key records no image. Throws when the registry fails. `how`: the time it took, for the log.
 */
export async function reuseByRecordedKey(
  input: Pick<DecisionInput, 'plan' | 'deps' | 'source' | 'target' | 'log'>,
  key: string,
  how: () => string,
): Promise<string | undefined> {
  const { plan, deps, log, target } = input;
  const outcome = await reuseByKey(key, target, input.source, registryAccess(plan, deps));
  if (outcome.kind !== 'reused') return undefined;
  logReused(log, outcome, key, how(), target.image);
  countReuse(deps);
  return outcome.digest;
}

/**
 * The tag written from the image recorded under the key: its digest, or undefined when there is
 * none or the reuse failed (then the job builds). `started`: when the key computation began.
 */
async function reuseRecorded(
  input: DecisionInput,
  keyed: Keyed,
  started: number,
): Promise<string | undefined> {
  const { log, target } = input;
  try {
    const digest = await reuseByRecordedKey(input, keyed.key, () => formatElapsed(started));
    if (digest !== undefined) {
      await input.deps.reuse.recent.set(recentId(input), keyed.input);
      return digest;
    }
    log.write(`no earlier image with this key (${buildKeyTag(keyed.key)} is not in ${target.repository})\n`);
  } catch (err) {
    log.write(`# reuse of key ${keyed.key} failed (${reasonOf(err)}): building\n`);
  }
  return undefined;
}

/** Before a build: what changed since the last build of this repository and branch (logged). */
async function changedInputs(input: DecisionInput, keyed: Keyed): Promise<RebuiltInput[] | undefined> {
  const changes = await input.deps.reuse.recent.changes(recentId(input), keyed.input);
  if (changes === undefined) return undefined;
  const changed = await withFiles(changes, input.filesOf);
  input.log.write(
    `inputs changed since the last build of this repository and branch: ${
      changed.length > 0 ? changed.map(describeRebuilt).join('; ') : 'none (its image is gone)'
    }\n`,
  );
  return changed;
}

/**
 * The decision for a key (or the reason there is none): wait for a build in flight with the same
 * key, write the tag from the recorded key, or build. `started`: when the key computation began.
 */
export async function decideForKey(
  input: DecisionInput,
  keyed: Keyed | string,
  started: number,
): Promise<Decision> {
  if (typeof keyed === 'string') {
    input.log.write(`# build key: none (${keyed}): no reuse for this build\n`);
    return { kind: 'build' };
  }
  input.log.write(`# build key ${keyed.key}\n`);
  const owned = await followOrOwn(input, keyed);
  if (owned.kind === 'wait') return owned;
  const leased = owned.lease === undefined ? {} : { lease: owned.lease };
  const digest = await reuseRecorded(input, keyed, started);
  if (digest !== undefined) return { kind: 'reuse', keyed, digest, ...leased };
  const changed = await changedInputs(input, keyed);
  return { kind: 'build', keyed, ...leased, ...(changed === undefined ? {} : { changed }) };
}

/** After a successful build: record the key in the target repository (logged, never throws). */
export async function recordBuiltKey(
  input: Pick<DecisionInput, 'plan' | 'deps' | 'source' | 'target' | 'log'>,
  keyed: Keyed,
): Promise<void> {
  const { plan, deps, log } = input;
  // The shared store refusing (unreachable, at maxmemory) costs the next build its list of changes only.
  await deps.reuse.recent.set(recentId(input), keyed.input).catch((err: unknown) => {
    log.write(`# inputs not remembered (${reasonOf(err)}): the next build cannot tell what changed\n`);
  });
  try {
    const recorded = await recordKey(keyed.key, input.target, registryAccess(plan, deps));
    log.write(`# build key recorded as ${recorded}\n`);
  } catch (err) {
    log.write(`# build key not recorded (${reasonOf(err)}): a later build with the same inputs will build\n`);
  }
}

/** A job that waits for another build with the same key: it returns (freeing its slot) and its request waits. */
export interface WaitingJob extends Extract<Decision, { kind: 'wait' }> {
  /** The result so far (the clone's): what the answer will say, less the img log and the digest. */
  readonly soFar: ResultSoFar;
  /** The img log, left open for the wait. */
  readonly log: CommandLogWriter;
  /** Where the image comes from (the clone's): the labels of the reuse written after the wait. */
  readonly source: ImageSource;
}

/** What a build knows of its result once cloned. */
export type ResultSoFar = Omit<BuildResult, 'imageBuildLogId' | 'digest'>;

/** How a job in its slot ended: a result (reused or built), or waiting for another build. */
export type JobOutcome = BuildResult | WaitingJob;

export const isWaitingJob = (outcome: JobOutcome): outcome is WaitingJob =>
  (outcome as Partial<WaitingJob>).kind === 'wait';
