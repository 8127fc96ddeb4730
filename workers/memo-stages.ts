/**
 * The answered commits as stages of the flow (docs/reuse.md): before the clone, a request whose
 * branch head was answered for the same request shape is answered from that record; after a keyed
 * answer, the answer is remembered for the shape.
 */
import type { BuildReporter } from '../src/builds/types.js';
import type { JobReuse } from './job.js';
import type { BuildDeps } from './build-deps.js';
import type { StageClock } from './common/stage-clock.js';
import type { Cloned } from './job.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { answerFromMemo, rememberAnswer } from './reuse/commit-memo.js';
import { isFollowingJob, type Decision, type JobOutcome } from './reuse/decision.js';
import { TaggedImageTarget } from '../src/rules/image-target.js';
// Before 2: the answered commits. A request whose branch head was answered for the same request
// shape, its image and movable inputs unchanged, is answered from that record: no clone. Its
// outcome: the result, or the line saying why not (undefined: no record could apply).
export async function fromMemo(
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse: JobReuse | undefined,
  clock: StageClock,
): Promise<BuildResult | string | undefined> {
  const started = performance.now();
  const memo = await answerFromMemo(plan, deps, signal, (stage) => clock.lap(stage));
  if (memo.kind === 'missed') return memo.why === undefined ? undefined : `# ${memo.why}: full path\n`;
  const { answer, head, via } = memo;
  reuse?.own.setCommit(head);
  const target = new TaggedImageTarget(answer.registry, answer.name, answer.tag);
  await reporter.resolved({ branch: answer.branch, commit: head, image: target.image });
  await reporter.phase('reusing');
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
    deps.metrics.buildReusesTotal.inc();
    deps.reuse.reusedFrom?.(target, answer.digest);
    clock.lap('answer');
    imgLog.write(clock.line());
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

/** A keyed answer, remembered for the request's shape (answered commits); the result as it was. */
export async function remembered(
  job: Cloned,
  decision: Decision | undefined,
  result: JobOutcome,
): Promise<JobOutcome> {
  if (decision?.keyed === undefined || isFollowingJob(result)) return result;
  const failed = await rememberAnswer(job.plan, job.deps, decision.keyed, result);
  if (failed !== undefined) job.deps.logger.warn({ repository: job.plan.repository }, failed.trim());
  job.clock.lap('remember');
  return result;
}
