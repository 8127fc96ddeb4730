/**
 * The answered commits as stages of the job (docs/reuse.md; job-flow.ts starts them): 3 look up
 * the answered commits, then 4 reuse the answered image when the branch's head was answered for
 * the same request shape (no clone); 14 remember the answer, after a keyed answer.
 */
import type { Job, Cloned } from './job.js';
import type { BuildResult } from '../plan/plan-types.js';
import { answerFromMemo, rememberAnswer, type MemoOutcome } from '../reuse/commit-memo.js';
import { countReuse, isWaitingJob, type Decision, type JobOutcome } from '../reuse/decision.js';
import { stage } from '../stages/stage.js';
import { STAGES } from '../stages/table.js';
import { TaggedImageTarget } from '../../src/rules/image-target.js';

// 3. look up the answered commits: the request shape's record for the branch's head, if it still
// answers (its image and movable inputs unchanged); else why not (nothing to say: none applied).
export function lookUpAnswered(job: Job): Promise<MemoOutcome> {
  return answerFromMemo(job.plan, job.deps, job.signal);
}

// 4. reuse the answered image: the record's image answers the request, no clone; both logs say so.
export async function reuseAnswered(
  job: Job,
  memo: Extract<MemoOutcome, { kind: 'answered' }>,
): Promise<BuildResult> {
  const { plan, deps, reporter, reuse } = job;
  const started = performance.now();
  const { answer, head, via } = memo;
  reuse?.own.setCommit(head);
  const target = new TaggedImageTarget(answer.registry, answer.name, answer.tag);
  await reporter.resolved({ branch: answer.branch, commit: head, image: target.image });
  const gitLog = await deps.logStore.open('git', plan.secrets);
  gitLog.write(
    (via === 'info/refs'
      ? `GET ${plan.url.cloneUrl.replace(/\/+$/, '')}/info/refs?service=git-upload-pack\n`
      : `git ls-remote -- ${plan.url.cloneUrl} ${plan.branch ?? 'HEAD'}\n`) +
      `# ${plan.branch ?? 'HEAD'} is at ${head}, answered before for this request: nothing cloned\n`,
  );
  await gitLog.close();
  const imgLog = await deps.logStore.open('img', plan.secrets);
  try {
    if (reuse?.note !== undefined) imgLog.write(reuse.note);
    for (const note of memo.notes) imgLog.write(note);
    imgLog.write(
      `commit ${head} answered before as ${target.atDigest(answer.digest)}, key ${answer.key}; ` +
        `${answer.movable.length} base image(s) and feature(s) by tag unchanged: reused, no build, no clone ` +
        `(${((performance.now() - started) / 1000).toFixed(2)} s); ${target.image} is ${answer.digest}\n`,
    );
    countReuse(deps);
    deps.reuse.reusedFrom?.(target, answer.digest);
    imgLog.write(job.laps.line());
  } finally {
    await imgLog.close();
  }
  return {
    image: target.image,
    registry: answer.registry,
    name: answer.name,
    tag: answer.tag,
    branch: answer.branch,
    commit: head,
    gitCloneLogId: gitLog.id,
    imageBuildLogId: imgLog.id,
    digest: answer.digest,
  };
}

/** 14. remember the answer: a keyed answer remembered for the request's shape; the result as it was. */
export async function remember(
  job: Cloned,
  decision: Decision | undefined,
  result: JobOutcome,
): Promise<JobOutcome> {
  const keyed = decision?.keyed;
  if (keyed === undefined || isWaitingJob(result)) return result;
  await stage(job, STAGES.rememberAnswer, async () => {
    const failed = await rememberAnswer(job.plan, job.deps, keyed, result);
    if (failed !== undefined) job.deps.logger.warn({ repository: job.plan.repository }, failed.trim());
  });
  return result;
}
