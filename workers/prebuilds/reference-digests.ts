/**
 * The digests of the base images and OCI features of a commit's definition, resolved now through
 * the build key's own input gathering (workers/reuse/key-inputs.ts), the same references resolved
 * again (a commit's files never change: no git), and what changed between two such readings
 * (`base image <ref>: <old> -> <new>`, as build-key.ts names it).
 */
import { FIXED_CANDIDATES } from '../../src/rules/definition.js';
import type { RegistryClient } from '../../src/registry/client.js';
import type { Config } from '../../src/config/types.js';
import { parseJsonc } from '../builder/jsonc.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { BuildKeyInput, KeyedReference } from '../reuse/build-key.js';
import { changedInputs } from '../reuse/input-changes.js';
import { computeKeyInput, resolve } from '../reuse/key-inputs.js';
import { buildAccess } from '../reuse/registry-credentials.js';
import { openCommitFiles } from './commit-files.js';

export interface ReferenceDigests {
  readonly baseImages: readonly KeyedReference[];
  readonly features: readonly KeyedReference[];
}

const GIT_DEADLINE_MS = 120_000;

/** The digests now, or the reason they cannot be read (no definition, unkeyable...). */
export async function referenceDigests(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'groups'> & { readonly config: Config; readonly client: RegistryClient },
  commit: string,
): Promise<ReferenceDigests | { readonly unreadable: string }> {
  const files = await openCommitFiles(plan, deps, commit, AbortSignal.timeout(GIT_DEADLINE_MS));
  try {
    for (const configPath of FIXED_CANDIDATES) {
      const bytes = await files.read(configPath);
      if (bytes === undefined) continue;
      let definition: unknown;
      try {
        definition = parseJsonc(bytes.toString('utf8'));
      } catch {
        return { unreadable: `${configPath} is not valid JSON` };
      }
      const outcome = await computeKeyInput(
        {
          configPath,
          configBytes: bytes,
          definition,
          objectIds: () => Promise.resolve([]),
          readText: async (path) => (await files.read(path))?.toString('utf8'),
        },
        {
          access: buildAccess(plan, deps.client, deps.config),
          platforms: plan.platforms,
          cliVersion: '',
          secretIds: [],
        },
      );
      if (outcome.kind === 'unkeyable') return { unreadable: outcome.reason };
      return { baseImages: outcome.input.baseImages, features: outcome.input.features };
    }
    return { unreadable: 'no definition' };
  } finally {
    await files.close();
  }
}

/**
 * The resolutions of one pass, by reference: a base image that a thousand repositories start from
 * is asked of its registry once per pass. Shared only among plans that use the service's own
 * registry credentials (a prebuild's always do: plan.ts), for which a reference resolves alike.
 */
export type PassResolutions = Map<string, Promise<KeyedReference>>;

/**
 * The references of an earlier reading of the same commit, each resolved again from its registry:
 * one manifest HEAD per reference not yet in `resolutions`, no git. Undefined reason: the first
 * that cannot be resolved.
 */
export async function digestsAgain(
  plan: BuildPlan,
  deps: { readonly config: Config; readonly client: RegistryClient },
  before: ReferenceDigests,
  resolutions: PassResolutions,
): Promise<ReferenceDigests | { readonly unreadable: string }> {
  const keyDeps = {
    access: buildAccess(plan, deps.client, deps.config),
    platforms: plan.platforms,
    cliVersion: '',
    secretIds: [],
  };
  const shared = plan.registryCredentials === undefined;
  const once = (ref: string, what: string): Promise<KeyedReference> => {
    if (!shared) return resolve(ref, what, keyDeps);
    const key = `${what} ${ref}`;
    const known = resolutions.get(key);
    if (known !== undefined) return known;
    const resolving = resolve(ref, what, keyDeps);
    resolutions.set(key, resolving);
    return resolving;
  };
  try {
    const [baseImages, features] = await Promise.all([
      Promise.all(before.baseImages.map(({ ref }) => once(ref, 'base image'))),
      Promise.all(before.features.map(({ ref }) => once(ref, 'feature'))),
    ]);
    return { baseImages, features };
  } catch (err) {
    // resolve() fails only with the reason it names (an unkeyable reference or a registry answer).
    return { unreadable: err instanceof Error ? err.message : 'registry call failed' };
  }
}

const asInput = (digests: ReferenceDigests): BuildKeyInput => ({
  configDigest: '',
  paths: [],
  baseImages: digests.baseImages,
  features: digests.features,
  platforms: [],
  cliVersion: '',
  buildProcessVersion: 0,
});

/** `base image <ref>: <old> -> <new>` and `feature <ref>: ...` for each reference that changed. */
export const changedReferences = (before: ReferenceDigests, after: ReferenceDigests): string[] =>
  changedInputs(asInput(before), asInput(after));
