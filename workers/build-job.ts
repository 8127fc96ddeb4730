/**
 * One build: per-request directory -> clone (git-* log) -> definition -> build and push
 * (img-* log) -> result. The directory is removed whatever the outcome.
 */
import { resolveDefinition } from './builder/definition.js';
import { buildAndPush } from './builder/devcontainer-build.js';
import type { BuildDeps } from './build-deps.js';
import { cloneRepository } from './git/clone.js';
import type { BuildPlan, BuildResult } from './plan-types.js';
import { createRequestDir, removeRequestDir } from './request-dir.js';

export async function runBuildJob(
  plan: BuildPlan,
  deps: BuildDeps,
  signal: AbortSignal,
): Promise<BuildResult> {
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    const cloned = await cloneRepository(plan, deps, dir, signal);
    const tag = plan.image.tag ?? `sha-${cloned.commit.slice(0, 7)}`;
    const image = `${plan.image.registry}/${plan.image.name}:${tag}`;
    const definition = await resolveDefinition({
      cloneDir: cloned.dir,
      generatedDir: dir.generated,
      ...(cloned.definition === undefined ? {} : { configPath: cloned.definition.configPath }),
      ...(deps.config.build.fallbackImage === undefined
        ? {}
        : { fallbackImage: deps.config.build.fallbackImage }),
    });
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
    });
    return {
      image,
      registry: plan.image.registry,
      name: plan.image.name,
      tag,
      branch: cloned.branch,
      commit: cloned.commit,
      gitCloneLogId: cloned.logId,
      imageBuildLogId: built.logId,
    };
  } finally {
    await removeRequestDir(dir);
  }
}
