/**
 * The build key from a checked-out clone (config bytes, Dockerfile, `git ls-tree`), and the key
 * dependencies of one request. The blobs it read are remembered (blob-cache.ts) so that the next
 * push with the same ones is keyed from the commit's trees, with no checkout (tree-key.ts).
 */
import { reasonOf } from '../../src/errors/errors.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cancellationOf } from '../../src/exec/cancellation.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { DevcontainerDefinition } from '../builder/definition.js';
import { devcontainerCliVersion } from '../builder/devcontainer-build.js';
import { parseJsonc } from '../builder/jsonc.js';
import { isRegularFile, type TreeEntry } from '../git/tree-listing.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { BuildKeyInput } from './build-key.js';
import { computeKeyInput, type KeyDeps } from './key-inputs.js';
import { readObjectIds } from './object-ids.js';
import { buildAccess } from './registry-credentials.js';
import type { ReuseStepDeps } from './reuse-deps.js';

/** A build key and what it was computed from. */
export interface Keyed {
  readonly key: string;
  readonly input: BuildKeyInput;
}

/** What a checked-out clone gives the key (see keyFromCheckout). */
export interface CheckoutKeySource {
  readonly plan: BuildPlan;
  readonly deps: ReuseStepDeps;
  readonly cloneDir: string;
  readonly definition: DevcontainerDefinition;
  /** The object id of the config's blob, as the clone read it (undefined for the fallback). */
  readonly configBlobId: string | undefined;
  /** The commit's trees around the definition (commit-definition.ts), to name the Dockerfile's blob. */
  readonly listing: ReadonlyMap<string, TreeEntry> | undefined;
  readonly log: CommandLogWriter;
  readonly signal: AbortSignal;
}

export function keyDeps(plan: BuildPlan, deps: ReuseStepDeps): KeyDeps {
  return {
    access: buildAccess(plan, deps.reuse.registry, deps.config),
    platforms: plan.platforms,
    cliVersion: devcontainerCliVersion(),
    secretIds: plan.buildSecrets.map((secret) => secret.id),
    ...(plan.secretsIdentity === undefined ? {} : { secretsIdentity: plan.secretsIdentity }),
    compression: plan.compression,
  };
}

/** The key from the checked-out files, or the reason there is none. */
export async function keyFromCheckout(source: CheckoutKeySource): Promise<Keyed | string> {
  const { plan, deps, definition } = source;
  let configBytes: Buffer;
  try {
    configBytes = await readFile(definition.configFile);
  } catch {
    return 'the config file could not be read';
  }
  let parsed: unknown;
  try {
    parsed = parseJsonc(configBytes.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const read = new Map<string, Buffer>();
  const outcome = await computeKeyInput(
    {
      configPath: definition.repositoryPath,
      configBytes,
      definition: parsed,
      objectIds: (readSet) =>
        readObjectIds(source.cloneDir, readSet, {
          baseEnv: deps.config.childEnv,
          log: source.log,
          signal: source.signal,
        }),
      readText: async (path) => {
        const bytes = await readFile(join(source.cloneDir, path)).catch(() => undefined);
        if (bytes !== undefined) read.set(path, bytes);
        return bytes?.toString('utf8');
      },
    },
    keyDeps(plan, deps),
  );
  if (outcome.kind !== 'keyed') return outcome.reason;
  if (source.configBlobId !== undefined)
    deps.reuse.blobs.set(plan.repository, source.configBlobId, configBytes);
  for (const [path, bytes] of read) {
    const entry = source.listing?.get(path);
    if (entry !== undefined && isRegularFile(entry)) deps.reuse.blobs.set(plan.repository, entry.oid, bytes);
  }
  return { key: outcome.key, input: outcome.input };
}

/** Runs a key computation; a failure (other than a cancellation) is the reason there is no key. */
export async function guardedKey(
  signal: AbortSignal,
  compute: () => Promise<Keyed | string>,
): Promise<Keyed | string> {
  try {
    return await compute();
  } catch (err) {
    if (cancellationOf(signal.reason) !== undefined) throw err;
    return `key computation failed: ${reasonOf(err)}`;
  }
}
