/**
 * STUB so the tree compiles: the execution helper owns this file and replaces it
 * (clone, builder, logs). Signature is final.
 */
import type { AppContext } from '../src/context.js';
import { notImplemented } from '../src/errors.js';
import type { BuildPlan, BuildResult } from './plan-types.js';

export function runBuildJob(_plan: BuildPlan, _ctx: AppContext, _signal: AbortSignal): Promise<BuildResult> {
  return Promise.reject(notImplemented('build execution'));
}
