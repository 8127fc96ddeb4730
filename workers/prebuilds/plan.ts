/**
 * A prebuild's plan: from its configuration and the server's credential entries only, never
 * from a payload (planBuild checks it as it checks a POST /build). Also the startup check that
 * every configuration plans, each problem naming the configuration.
 */
import type { Config, PrebuildConfiguration } from '../../src/config/types.js';
import { reasonOf } from '../../src/errors/errors.js';
import { configurationLabel } from '../../src/config/prebuilds.js';
import { planBuild } from '../plan/plan.js';
import type { BuildPlan, BuildRequest } from '../plan/plan-types.js';

export function prebuildPlan(
  configuration: PrebuildConfiguration,
  branch: string | undefined,
  config: Config,
): BuildPlan {
  const request: BuildRequest = {
    repository: configuration.repository,
    ...(branch === undefined ? {} : { branch }),
    image: { registry: configuration.image.registry, name: configuration.image.name },
    ...(configuration.platforms === undefined ? {} : { platforms: [...configuration.platforms] }),
    ...(configuration.buildOptions === undefined ? {} : { buildOptions: { ...configuration.buildOptions } }),
  };
  return planBuild(request, config);
}

/** One problem per configuration that does not plan (bad URL, scheme, no credential for a pinned host...). */
export function prebuildPlanProblems(config: Config): string[] {
  return config.prebuilds.configurations.flatMap((configuration, index) => {
    try {
      prebuildPlan(configuration, undefined, config);
      return [];
    } catch (err) {
      const reason = reasonOf(err);
      return [`${configurationLabel(configuration, index)}: ${reason}`];
    }
  });
}
