/**
 * One build: per-request directory -> clone (git-* log) -> definition -> with reuse on, the
 * reuse step (build key; follow a build in flight with the same key, here or on another replica,
 * or write the tag from the recorded key) -> build and push (img-* log) -> record the key ->
 * result. A lease on the key (Redis mode) is released with the outcome when the job ends. The
 * directory is removed whatever the outcome. Progress (phase, log ids as soon as each log is
 * opened, the commit) goes to the reporter it receives.
 */
import type { BuiltImage, FollowedBuild, HeldLease } from '../src/builds/leases.js';
import type { BuildReporter } from '../src/builds/types.js';
import type { CommandLogWriter, LogStore } from '../src/logs/types.js';
import { resolveDefinition } from './builder/definition.js';
import { buildAndPush } from './builder/devcontainer-build.js';
import type { BuildDeps } from './build-deps.js';
import { cloneRepository } from './git/clone.js';
import type { BuildPlan, BuildResult } from './plan-types.js';
import { createRequestDir, removeRequestDir } from './request-dir.js';
import type { LeadBuild } from './reuse/in-flight.js';
import { afterBuild, reuseStep, type Keyed } from './reuse/reuse-step.js';

/** Reuse for this job: its entry in the in-flight map, and whether it may follow another build. */
export interface JobReuse {
  readonly lead: LeadBuild<BuildResult>;
  readonly followAllowed: boolean;
  /** A line for the top of the img log (why this job builds after waiting for another build). */
  readonly note?: string;
}

/**
 * The job found a build with the same key in flight: it returns (freeing its slot) and the
 * caller waits for that build, then answers as a reuse. `log` stays open for the caller.
 */
export interface FollowBuild {
  readonly kind: 'follow';
  readonly build: FollowedBuild;
  readonly keyed: Keyed;
  readonly partial: Omit<BuildResult, 'imageBuildLogId'>;
  readonly log: CommandLogWriter;
}

export type JobOutcome = BuildResult | FollowBuild;

export const isFollow = (outcome: JobOutcome): outcome is FollowBuild =>
  (outcome as Partial<FollowBuild>).kind === 'follow';

/** The log store, reporting the id of each log it opens. */
function reportingLogStore(logStore: LogStore, reporter: BuildReporter): LogStore {
  return {
    read: (id) => logStore.read(id),
    follow: (id, signal) => logStore.follow(id, signal),
    remove: (id) => logStore.remove(id),
    open: async (kind, secrets) => {
      const log = await logStore.open(kind, secrets);
      await reporter.logOpened(kind, log.id);
      return log;
    },
  };
}

export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
): Promise<BuildResult>;
export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse: JobReuse | undefined,
): Promise<JobOutcome>;
export async function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
): Promise<JobOutcome> {
  const deps: BuildDeps = { ...buildDeps, logStore: reportingLogStore(buildDeps.logStore, reporter) };
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    await reporter.phase('cloning');
    const cloned = await cloneRepository(plan, deps, dir, signal);
    reuse?.lead.setCommit(cloned.commit);
    const tag = plan.image.tag ?? `sha-${cloned.commit.slice(0, 7)}`;
    const image = `${plan.image.registry}/${plan.image.name}:${tag}`;
    await reporter.resolved({ branch: cloned.branch, commit: cloned.commit, image });
    await reporter.phase('resolving');
    const definition = await resolveDefinition({
      cloneDir: cloned.dir,
      generatedDir: dir.generated,
      ...(cloned.definition === undefined ? {} : { configPath: cloned.definition.configPath }),
      ...(deps.config.build.fallbackImage === undefined
        ? {}
        : { fallbackImage: deps.config.build.fallbackImage }),
    });
    const target = { registry: plan.image.registry, name: plan.image.name, tag };
    const partial = {
      image,
      registry: plan.image.registry,
      name: plan.image.name,
      tag,
      branch: cloned.branch,
      commit: cloned.commit,
      gitCloneLogId: cloned.logId,
    };
    const log = await deps.logStore.open('img', plan.secrets);
    if (reuse?.note !== undefined) log.write(reuse.note);
    let handedOver = false;
    let lease: HeldLease | undefined;
    let built: BuiltImage | undefined;
    const answer = (result: BuildResult): BuildResult => {
      built = result;
      return result;
    };
    try {
      let keyed: Keyed | undefined;
      if (reuse !== undefined && plan.noCache) {
        log.write('# buildOptions.noCache: building without looking for an earlier image\n');
      } else if (reuse !== undefined) {
        const decision = await reuseStep({
          plan,
          deps,
          cloneDir: cloned.dir,
          branch: cloned.branch,
          commit: cloned.commit,
          definition,
          target,
          log,
          signal,
          lead: reuse.lead,
          followAllowed: reuse.followAllowed,
        });
        if (decision.kind === 'follow') {
          handedOver = true;
          return { kind: 'follow', build: decision.build, keyed: decision.keyed, partial, log };
        }
        lease = decision.lease;
        if (decision.kind === 'reused') return answer({ ...partial, imageBuildLogId: log.id });
        keyed = decision.keyed;
      }
      await reporter.phase('building');
      const pushed = await buildAndPush({
        plan,
        deps,
        dir,
        workspaceFolder: cloned.dir,
        configFile: definition.configFile,
        dockerfileBased: definition.dockerfileBased,
        imageRef: image,
        commit: cloned.commit,
        signal,
        log,
      });
      if (keyed !== undefined) {
        await afterBuild({ plan, deps, branch: cloned.branch, target, log }, keyed);
      }
      return answer({ ...partial, imageBuildLogId: pushed.logId });
    } finally {
      // The builds that follow this one on other replicas learn where its image is (or that it failed).
      await lease?.release(built);
      if (!handedOver) await log.close();
    }
  } finally {
    await removeRequestDir(dir);
  }
}
