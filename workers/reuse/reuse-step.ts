/**
 * The reuse step of a build job, after the clone (docs/reuse.md): compute the build key; follow a
 * build with the same key in flight for the same target repository (here or, in Redis mode, on
 * another replica); else claim the key's lease, then write this request's tag from the key's recorded
 * image (no CLI, no BuildKit) or build, saying why in the img log. `afterBuild` records the key. A
 * failure of the reuse path never fails the request: it is logged and the build runs.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cancellationOf } from '../../src/exec/cancellation.js';
import {
  STOPPED_WAITING,
  type BuildLeases,
  type FollowedBuild,
  type FollowedOutcome,
  type HeldLease,
} from '../leases/leases.js';
import { isServiceError } from '../../src/errors/errors.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import { RegistryClient } from '../../src/registry/client.js';
import type { StepDeps } from '../common/step-deps.js';
import type { DevcontainerDefinition } from '../builder/definition.js';
import { devcontainerCliVersion } from '../builder/devcontainer-build.js';
import { parseJsonc } from '../builder/jsonc.js';
import { isRegularFile, type TreeEntry } from '../git/tree-listing.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { buildKeyTag, changedInputs, type BuildKeyInput } from './build-key.js';
import {
  createInProcessInFlight,
  type InFlightBuild,
  type InFlightBuilds,
  type LeadBuild,
} from './in-flight.js';
import { BlobCache } from './blob-cache.js';
import { computeKeyInput, type KeyDeps } from './key-inputs.js';
import { readObjectIds } from './object-ids.js';
import { RecentInputs } from './recent-inputs.js';
import { buildCredentials } from './registry-credentials.js';
import type { SupplyChain } from '../../src/supply-chain/supply-chain.js';
import { recordKey, reuseByKey, type RegistryAccess, type ReuseTarget } from './reuse-image.js';

export interface ReuseDeps {
  readonly registry: RegistryClient;
  /** Attestations and signatures of the images answered (src/supply-chain/). */
  readonly supply: SupplyChain;
  readonly inFlight: InFlightBuilds<BuildResult>;
  /** Builds with the same key on other replicas (Redis mode). */
  readonly leases: BuildLeases;
  readonly recent: RecentInputs;
  readonly blobs: BlobCache;
  /** Told the image each reuse was written from. */
  readonly reusedFrom?: (repository: string, digest: string) => void;
}

/**
 * The reuse side of one build router: its registry client, the in-process in-flight map, the
 * leases of the mode (src/stores.ts), recent inputs, the blobs the keys read.
 */
export function createReuseDeps(
  insecureRegistries: readonly string[],
  leases: BuildLeases,
  supply: SupplyChain,
  reusedFrom?: (repository: string, digest: string) => void,
): ReuseDeps {
  return {
    ...(reusedFrom === undefined ? {} : { reusedFrom }),
    registry: new RegistryClient({ insecureRegistries }),
    supply,
    inFlight: createInProcessInFlight<BuildResult>(),
    leases,
    recent: new RecentInputs(),
    blobs: new BlobCache(),
  };
}

/** What the job knows when the reuse step runs. */
export interface ReuseStepInput {
  readonly plan: BuildPlan;
  readonly deps: Pick<StepDeps, 'config' | 'metrics'> & { readonly reuse: ReuseDeps };
  readonly branch: string;
  readonly commit: string;
  readonly target: ReuseTarget;
  readonly log: CommandLogWriter;
  /** This build in the in-flight map (the key is added to it). */
  readonly lead: LeadBuild<BuildResult>;
  /** Whether a build in flight with the same key may be followed. */
  readonly followAllowed: boolean;
}

export interface Keyed {
  readonly key: string;
  readonly input: BuildKeyInput;
}

/** `lease`: this build leads its key across replicas; the job releases it with its outcome. */
export type ReuseDecision =
  | { readonly kind: 'reused'; readonly keyed: Keyed; readonly digest: string; readonly lease?: HeldLease }
  | { readonly kind: 'follow'; readonly keyed: Keyed; readonly build: FollowedBuild }
  | { readonly kind: 'build'; readonly keyed?: Keyed; readonly lease?: HeldLease };

const seconds = (startedMs: number): string => `${((performance.now() - startedMs) / 1000).toFixed(2)} s`;

export const reasonOf = (err: unknown): string =>
  isServiceError(err) ? err.message : err instanceof Error ? err.message : 'unknown failure';

export function registryAccess(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'> & { readonly reuse: ReuseDeps },
): RegistryAccess {
  return {
    client: deps.reuse.registry,
    insecureRegistries: deps.config.insecureRegistries,
    credentialsFor: buildCredentials(plan, deps.config.registryAuth),
    supply: deps.reuse.supply,
    ...(deps.reuse.reusedFrom === undefined ? {} : { reusedFrom: deps.reuse.reusedFrom }),
  };
}

/** A build in this process's in-flight map, followed: one more waiter of it while waiting. */
export function followInProcess(build: InFlightBuild<BuildResult>): FollowedBuild {
  return {
    where: 'here',
    join(signal) {
      const waiter = build.join();
      if (waiter === undefined) return undefined;
      let leave = (): void => undefined;
      const stopped = new Promise<FollowedOutcome>((resolve) => {
        leave = () => {
          waiter.leave(signal.reason);
          resolve({ ok: false, why: STOPPED_WAITING });
        };
        if (signal.aborted) leave();
        else signal.addEventListener('abort', leave, { once: true });
      });
      const settled = build.result.then(
        (built): FollowedOutcome => ({ ok: true, built }),
        (err: unknown): FollowedOutcome => ({
          ok: false,
          why: `following the build with the same key failed (${reasonOf(err)})`,
        }),
      );
      return Promise.race([settled, stopped]).finally(() => {
        signal.removeEventListener('abort', leave);
        waiter.leave();
      });
    },
  };
}

/** The in-flight key of a build key in one target repository. */
export const keyInFlightId = (target: ReuseTarget, key: string): string =>
  `key:${target.registry}/${target.name}:${key}`;

const recentId = (plan: BuildPlan, branch: string): string =>
  RecentInputs.keyOf(plan.repository, branch, `${plan.image.registry}/${plan.image.name}`);

/** What a checked-out clone gives the key (see keyFromCheckout). */
export interface CheckoutKeySource {
  readonly plan: BuildPlan;
  readonly deps: Pick<StepDeps, 'config'> & { readonly reuse: ReuseDeps };
  readonly cloneDir: string;
  readonly definition: DevcontainerDefinition;
  /** The object id of the config's blob, as the clone read it (undefined for the fallback). */
  readonly configBlobId: string | undefined;
  /** The commit's trees around the definition (commit-definition.ts), to name the Dockerfile's blob. */
  readonly listing: ReadonlyMap<string, TreeEntry> | undefined;
  readonly log: CommandLogWriter;
  readonly signal: AbortSignal;
}

export function keyDeps(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'> & { readonly reuse: ReuseDeps },
): KeyDeps {
  return {
    client: deps.reuse.registry,
    insecureRegistries: deps.config.insecureRegistries,
    credentialsFor: buildCredentials(plan, deps.config.registryAuth),
    platforms: plan.platforms,
    cliVersion: devcontainerCliVersion(),
    secretIds: plan.buildSecrets.map((secret) => secret.id),
  };
}

/**
 * The key from the checked-out files (config bytes, Dockerfile) and `git ls-tree`; the blobs it
 * read are remembered (blob-cache.ts) so that the next push with the same ones needs no checkout.
 */
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

/**
 * A build with the same key to follow (in this process first, then on another replica), else this
 * build leads the key: in the in-flight map, and across replicas while `lease` is held.
 */
async function followOrLead(
  input: ReuseStepInput,
  keyed: Keyed,
): Promise<
  Extract<ReuseDecision, { kind: 'follow' }> | { readonly kind: 'lead'; readonly lease?: HeldLease }
> {
  const { deps, log, target } = input;
  const inFlightId = keyInFlightId(target, keyed.key);
  const other = deps.reuse.inFlight.find(inFlightId);
  if (other !== undefined && other !== input.lead && input.followAllowed) {
    log.write(
      `# a build with the same key is in flight for ${target.registry}/${target.name}: waiting for it\n`,
    );
    return { kind: 'follow', keyed, build: followInProcess(other) };
  }
  input.lead.alias(inFlightId);
  try {
    const claim = await deps.reuse.leases.claim(inFlightId, { follow: input.followAllowed });
    if (claim.kind === 'follow') {
      log.write(
        `# a build with the same key runs on another replica for ${target.registry}/${target.name}: waiting for it\n`,
      );
      return { kind: 'follow', keyed, build: claim.build };
    }
    if (claim.kind === 'leader') return { kind: 'lead', lease: claim.lease };
  } catch (err) {
    log.write(`# not coalesced with other replicas (${reasonOf(err)})\n`);
  }
  return { kind: 'lead' };
}

/**
 * The tag written from the image recorded under the key: its digest, or undefined when there is
 * none or the reuse failed (then the job builds). `started`: when the key computation began.
 */
async function reuseRecorded(
  input: ReuseStepInput,
  keyed: Keyed,
  started: number,
): Promise<string | undefined> {
  const { plan, deps, log, target } = input;
  try {
    const outcome = await reuseByKey(
      keyed.key,
      target,
      {
        repository: plan.repository,
        branch: input.branch,
        commit: input.commit,
        namedTag: plan.image.tag ?? '',
      },
      registryAccess(plan, deps),
    );
    if (outcome.kind === 'reused') {
      for (const note of outcome.notes) log.write(note);
      log.write(
        `inputs unchanged since ${outcome.earlier}, key ${keyed.key}: reused, no build (${seconds(started)}); ` +
          `${target.registry}/${target.name}:${target.tag} is ${outcome.digest}\n`,
      );
      deps.reuse.recent.set(recentId(plan, input.branch), keyed.input);
      deps.metrics.buildReusesTotal.inc();
      return outcome.digest;
    }
    log.write(
      `no earlier image with this key (${buildKeyTag(keyed.key)} is not in ${target.registry}/${target.name})\n`,
    );
  } catch (err) {
    log.write(`# reuse of key ${keyed.key} failed (${reasonOf(err)}): building\n`);
  }
  return undefined;
}

/** Before a build: what changed since the last build of this repository and branch here. */
function logChangedInputs(input: ReuseStepInput, keyed: Keyed): void {
  const before = input.deps.reuse.recent.get(recentId(input.plan, input.branch));
  if (before === undefined) return;
  const changed = changedInputs(before, keyed.input);
  input.log.write(
    `inputs changed since the last build of this repository and branch on this instance: ${
      changed.length > 0 ? changed.join('; ') : 'none (its image is gone)'
    }\n`,
  );
}

/**
 * The decision for a key (or the reason there is none): follow a build in flight with the same
 * key, write the tag from the recorded key, or build. `started`: when the key computation began.
 */
export async function reuseStep(
  input: ReuseStepInput,
  keyed: Keyed | string,
  started: number,
): Promise<ReuseDecision> {
  if (typeof keyed === 'string') {
    input.log.write(`# build key: none (${keyed}): no reuse for this build\n`);
    return { kind: 'build' };
  }
  input.log.write(`# build key ${keyed.key}\n`);
  const claimed = await followOrLead(input, keyed);
  if (claimed.kind === 'follow') return claimed;
  const leased = claimed.lease === undefined ? {} : { lease: claimed.lease };
  const digest = await reuseRecorded(input, keyed, started);
  if (digest !== undefined) return { kind: 'reused', keyed, digest, ...leased };
  logChangedInputs(input, keyed);
  return { kind: 'build', keyed, ...leased };
}

/** After a successful build: record the key in the target repository (logged, never throws). */
export async function afterBuild(
  input: Pick<ReuseStepInput, 'plan' | 'deps' | 'branch' | 'target' | 'log'>,
  keyed: Keyed,
): Promise<void> {
  const { plan, deps, log } = input;
  deps.reuse.recent.set(recentId(plan, input.branch), keyed.input);
  try {
    const recorded = await recordKey(keyed.key, input.target, registryAccess(plan, deps));
    log.write(`# build key recorded as ${recorded}\n`);
  } catch (err) {
    log.write(`# build key not recorded (${reasonOf(err)}): a later build with the same inputs will build\n`);
  }
}
