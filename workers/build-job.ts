/**
 * One build: per-request directory -> clone (git-* log) -> definition -> with reuse on, the
 * reuse step (build key; follow a build in flight with the same key, or write the tag from the
 * recorded key) -> build and push (img-* log) -> record the key -> result. The directory is
 * removed whatever the outcome.
 */
import type { CommandLogWriter } from '../src/logs/types.js';
import { resolveDefinition } from './builder/definition.js';
import { buildAndPush } from './builder/devcontainer-build.js';
import type { BuildDeps } from './build-deps.js';
import { cloneRepository } from './git/clone.js';
import type { BuildPlan, BuildResult } from './plan-types.js';
import { createRequestDir, removeRequestDir } from './request-dir.js';
import type { InFlightBuild, LeadBuild } from './reuse/in-flight.js';
import { afterBuild, reuseStep, type Keyed } from './reuse/reuse-step.js';

/** Reuse for this job: its entry in the in-flight map, and whether it may follow another build. */
export interface JobReuse {
  readonly lead: LeadBuild<BuildResult>;
  readonly followAllowed: boolean;
}

/**
 * The job found a build with the same key in flight: it returns (freeing its slot) and the
 * caller waits for that build, then answers as a reuse. `log` stays open for the caller.
 */
export interface FollowBuild {
  readonly kind: 'follow';
  readonly build: InFlightBuild<BuildResult>;
  readonly keyed: Keyed;
  readonly partial: Omit<BuildResult, 'imageBuildLogId'>;
  readonly log: CommandLogWriter;
}

export type JobOutcome = BuildResult | FollowBuild;

export const isFollow = (outcome: JobOutcome): outcome is FollowBuild =>
  (outcome as Partial<FollowBuild>).kind === 'follow';

export function runBuildJob(plan: BuildPlan, deps: BuildDeps, signal: AbortSignal): Promise<BuildResult>;
export function runBuildJob(
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reuse: JobReuse | undefined,
): Promise<JobOutcome>;
export async function runBuildJob(
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
  reuse?: JobReuse,
): Promise<JobOutcome> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const cloned = await cloneRepository(plan, deps, dir, signal);
    reuse?.lead.setCommit(cloned.commit);
    const tag = plan.image.tag ?? `sha-${cloned.commit.slice(0, 7)}`;
    const image = `${plan.image.registry}/${plan.image.name}:${tag}`;
    const target = { registry: plan.image.registry, name: plan.image.name, tag };
    const definition = await resolveDefinition({
      cloneDir: cloned.dir,
      generatedDir: dir.generated,
      ...(deps.config.build.fallbackImage === undefined
        ? {}
        : { fallbackImage: deps.config.build.fallbackImage }),
    });
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
    let handedOver = false;
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
        if (decision.kind === 'reused') return { ...partial, imageBuildLogId: log.id };
        if (decision.kind === 'follow') {
          handedOver = true;
          return { kind: 'follow', build: decision.build, keyed: decision.keyed, partial, log };
        }
        keyed = decision.keyed;
      }
      const built = await buildAndPush({
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
      return { ...partial, imageBuildLogId: built.logId };
    } finally {
      if (!handedOver) await log.close();
    }
  } finally {
    await removeRequestDir(dir);
  }
}
