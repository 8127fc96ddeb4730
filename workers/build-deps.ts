/**
 * What a build job receives: the steps' slices of the application (common/step-deps.ts) and the
 * worker's own parts. Built once by the build worker (src/service.ts makes it), or by a test.
 */
import type { BuilderHandle } from './builder/remote-builder.js';
import type { StepDeps } from './common/step-deps.js';
import type { ReuseDeps } from './reuse/reuse-step.js';

export interface BuildDeps extends StepDeps {
  /** The builder of this build (its place in the fleet), or a RemoteBuilder without endpoint. */
  readonly remoteBuilder: BuilderHandle;
  /** The build key, reuse and coalescing (used when config.build.reuse is on). */
  readonly reuse: ReuseDeps;
}
