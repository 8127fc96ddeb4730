/**
 * One build: per-request directory -> clone (git-* log) -> definition -> build and push
 * (img-* log) -> result. The directory is removed whatever the outcome. Progress (phase, log
 * ids as soon as each log is opened, the commit) goes to the reporter it receives.
 */
import type { BuildReporter } from '../src/builds/types.js';
import type { LogStore } from '../src/logs/types.js';
import { resolveDefinition } from './builder/definition.js';
import { buildAndPush } from './builder/devcontainer-build.js';
import type { BuildDeps } from './build-deps.js';
import { cloneRepository } from './git/clone.js';
import type { BuildPlan, BuildResult } from './plan-types.js';
import { createRequestDir, removeRequestDir } from './request-dir.js';

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

export async function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
): Promise<BuildResult> {
  const deps: BuildDeps = { ...buildDeps, logStore: reportingLogStore(buildDeps.logStore, reporter) };
  const dir = await createRequestDir(deps.config.scratchDir);
  try {
    await reporter.phase('cloning');
    const cloned = await cloneRepository(plan, deps, dir, signal);
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
    await reporter.phase('building');
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
