/**
 * The job of a build in its slot (build-flow.ts runs it once admitted): stages 3 to 10 and 12 to
 * 14 of STAGES in order, each started by `stage`. Each stage is a call to job-stages.ts or
 * memo-stages.ts that returns here; the img log and the key's lease are settled by JobEnding.
 */
import type { BuildReporter } from '../../src/builds/types.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { BuildDeps } from './build-deps.js';
import { startPendingCli, type PendingCli } from '../builder/pending-cli.js';
import { createRequestDir, removeRequestDir } from '../common/request-dir.js';
import { JobEnding, type CheckedOut, type Cloned, type Job, type JobReuse } from './job.js';
import { reportingLogStore, reportKey } from './job-details.js';
import {
  answered,
  buildAndPush,
  checkOut,
  clone,
  decide,
  keyFromCheckout,
  keyFromTrees,
  recordImage,
} from './job-stages.js';
import { lookUpAnswered, remember, reuseAnswered } from './memo-stages.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { Decision, JobOutcome } from '../reuse/decision.js';
import { BuildLaps } from '../stages/laps.js';
import { stage } from '../stages/stage.js';
import { STAGES } from '../stages/table.js';

/** The job of an admitted build, in its slot: its outcome (a result, or waiting for another build). */
export async function runJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
  laps: BuildLaps = new BuildLaps(buildDeps.logger),
): Promise<JobOutcome> {
  const deps: BuildDeps = { ...buildDeps, logStore: reportingLogStore(buildDeps.logStore, reporter) };
  laps.recorded(reporter, 'cloning');
  laps.jobStarted();
  const dir = await createRequestDir(deps.config.scratchDir);
  // The CLI loads while git runs; discarded unless the job builds. A job that may be answered from
  // the trees (reuse on) starts it only once it knows it will check out: an unchanged push, the
  // common case then, does not pay its start-up.
  let pending: PendingCli | undefined;
  const cli = (): PendingCli => (pending ??= startPendingCli(deps, { signal, secrets: plan.secrets }));
  const keying = reuse !== undefined && !plan.noCache;
  if (!keying) cli();
  const job: Job = { plan, deps, dir, signal, reporter, reuse, keying, cli, laps };
  try {
    const memo = keying ? await stage(job, STAGES.lookUpAnswered, () => lookUpAnswered(job)) : undefined;
    if (memo?.kind === 'answered')
      return await stage(job, STAGES.reuseAnswered, () => reuseAnswered(job, memo));
    const why = memo?.why;
    const cloned = await stage(job, STAGES.clone, () =>
      clone(why === undefined ? job : { ...job, memoNote: `# ${why}: full path\n` }),
    );
    try {
      return await afterClone(cloned);
    } finally {
      await cloned.open.end();
    }
  } finally {
    await pending?.discard();
    await removeRequestDir(dir);
  }
}

/** Stages 6 to 10 and 12 to 14, in order. */
async function afterClone(job: Cloned): Promise<JobOutcome> {
  const ending = new JobEnding(job);
  try {
    const early = await fromTrees(job, ending);
    if (early !== undefined && early.kind !== 'build')
      return ending.ended(await remember(job, early, answered(job, early, await ending.log())));
    const checkedOut = await stage(job, STAGES.checkOut, () => checkOut(job));
    const imgLog = await ending.log();
    const decision = early ?? (await fromCheckout(job, ending, checkedOut, imgLog));
    if (decision?.keyed !== undefined) await reportKey(job, decision);
    if (decision !== undefined && decision.kind !== 'build')
      return ending.ended(await remember(job, decision, answered(job, decision, imgLog)));
    // Only work that runs BuildKit counts against a tenant's budget: a reuse is answered above.
    await job.deps.buildAllowed?.(job.plan.repository);
    const pushed = await stage(job, STAGES.buildAndPush, () =>
      buildAndPush(job, checkedOut, imgLog, decision?.keyed?.key ?? ''),
    );
    const result = await stage(job, STAGES.recordImage, () =>
      recordImage(job, decision?.keyed, pushed, imgLog),
    );
    return ending.ended(await remember(job, decision, result));
  } finally {
    await ending.close();
  }
}

/**
 * Stages 6 and 7 (keying only): the key from the commit's trees, and its decision; a decision not
 * to build ends the clone (nothing checked out). Undefined: no key from the trees.
 */
async function fromTrees(job: Cloned, ending: JobEnding): Promise<Decision | undefined> {
  if (job.reuse === undefined || !job.keying) return undefined;
  const started = performance.now();
  const keyed = await stage(job, STAGES.keyFromTrees, () => keyFromTrees(job, ending));
  if (keyed === undefined) return undefined;
  return stage(job, STAGES.decideFromTrees, async () => {
    const decision = await decide(job, ending, keyed, started);
    if (decision.kind === 'build') return decision;
    // The record names the key it reused (its usage's saving is looked up by it, docs/usage.md).
    await reportKey(job, decision);
    await job.open.end('build inputs known from the trees and unchanged: nothing checked out');
    return decision;
  });
}

/** Stages 9 and 10 (reuse on): the key from the checkout, and its decision. Undefined: no reuse. */
async function fromCheckout(
  job: Cloned,
  ending: JobEnding,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
): Promise<Decision | undefined> {
  if (job.reuse === undefined) return undefined;
  if (!job.keying) {
    imgLog.write('# buildOptions.noCache: building without looking for an earlier image\n');
    return undefined;
  }
  const started = performance.now();
  const keyed = await stage(job, STAGES.keyFromCheckout, () => keyFromCheckout(job, checkedOut, imgLog));
  return stage(job, STAGES.decideFromCheckout, () => decide(job, ending, keyed, started));
}
