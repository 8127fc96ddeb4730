/**
 * The stages a job runs in its slot, one function each (job-flow.ts starts them in order, numbered
 * as STAGES numbers them): 5 clone, 6 key from the trees, 7 and 10 decide, 8 check out, 9 key from
 * the checkout, 12 build and push, 13 record the image. Each returns to the flow; none calls
 * another stage. The record's phase is set by the flow, from each stage's row.
 */
import { reasonOf, serviceError } from '../../src/errors/errors.js';
import { retryAfterDelays } from '../../src/errors/retry.js';
import { cancellationOf } from '../../src/exec/cancellation.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import { resolveDefinition } from '../builder/definition.js';
import { buildAndPush as devcontainerBuild } from '../builder/devcontainer-build.js';
import { openClone } from '../git/clone.js';
import { openTreesFirst } from '../git/tree-clone.js';
import type { BuildResult } from '../plan/plan-types.js';
import { guardedKey, keyDeps, keyFromCheckout as checkoutKey, type Keyed } from '../reuse/checkout-key.js';
import {
  decideForKey,
  recordBuiltKey,
  type Decision,
  type JobOutcome,
  type ResultSoFar,
} from '../reuse/decision.js';
import { registryAccess } from '../reuse/reuse-deps.js';
import { pushedDigest, signAnswered } from '../reuse/reuse-image.js';
import { ImageTarget } from '../../src/rules/image-target.js';
import { keyFromTrees as treeKey } from '../reuse/tree-key.js';
import { StepTracker } from '../builder/buildkit-steps.js';
import type { CheckedOut, Cloned, Job, JobEnding } from './job.js';
import { reportPushed, reportSteps, tappedLog } from './job-details.js';
// 5. clone: the partial clone of the plan's branch (git log); the build learns its commit and image.
export async function clone(job: Job): Promise<Cloned> {
  const { plan, deps, dir, signal, reporter, reuse } = job;
  // A keyed job may end on the trees alone: over http(s) they are read in process (tree-clone.ts).
  const open = await (job.keying ? openTreesFirst : openClone)(
    plan,
    { ...deps, blobs: deps.reuse.blobs },
    dir,
    signal,
  );
  reuse?.own.setCommit(open.commit);
  const target = ImageTarget.of(plan.image).atCommit(open.commit);
  await reporter.resolved({ branch: open.branch, commit: open.commit, image: target.image });
  const soFar: ResultSoFar = {
    image: target.image,
    registry: target.registry,
    name: target.name,
    tag: target.tag,
    branch: open.branch,
    commit: open.commit,
    gitCloneLogId: open.logId,
  };
  const source = {
    repository: plan.repository,
    commit: open.commit,
    branch: open.branch,
    namedTag: plan.image.tag ?? '',
  };
  return { ...job, open, target, soFar, source };
}

// 6. key from the trees: the commit's trees and the blobs an earlier build read (no checkout).
export async function keyFromTrees(job: Cloned, ending: JobEnding): Promise<Keyed | undefined> {
  const { plan, deps, open } = job;
  if (job.reuse === undefined || !job.keying) return undefined;
  let keyed: Keyed | undefined;
  try {
    keyed = await treeKey(
      {
        repository: plan.repository,
        located: open.located,
        listPaths: open.listPaths,
        fallbackImage: deps.config.build.fallbackImage,
        blobs: deps.reuse.blobs,
      },
      keyDeps(plan, deps),
    );
  } catch (err) {
    if (cancellationOf(job.signal.reason) !== undefined) throw err;
    return undefined;
  }
  if (keyed !== undefined)
    (await ending.log()).write(
      "# build inputs read from the commit's trees and blobs an earlier build read\n",
    );
  return keyed;
}

// 7. and 10. decide: reuse the key's image, wait for a build with the same key, or build.
export async function decide(
  job: Cloned,
  ending: JobEnding,
  keyed: Keyed | string,
  started: number,
): Promise<Decision> {
  const { reuse } = job;
  if (reuse === undefined)
    throw serviceError('INTERNAL', {}, { cause: 'a job without reuse decides nothing' });
  const log = await ending.log();
  const { changedFiles } = job.open;
  const decision = await decideForKey(
    {
      plan: job.plan,
      deps: job.deps,
      source: job.source,
      target: job.target,
      log,
      own: reuse.own,
      followAllowed: reuse.followAllowed,
      ...(changedFiles === undefined ? {} : { filesOf: (paths) => changedFiles(paths, job.signal) }),
    },
    keyed,
    started,
  );
  return ending.decided(decision);
}

// 8. check out: the read set, and the definition found in it.
export async function checkOut(job: Cloned): Promise<CheckedOut> {
  const { deps, dir } = job;
  job.cli();
  const cloned = await job.open.checkout();
  const definition = await resolveDefinition({
    cloneDir: cloned.dir,
    generatedDir: dir.generated,
    ...(cloned.definition === undefined ? {} : { configPath: cloned.definition.configPath }),
    ...(deps.config.build.fallbackImage === undefined
      ? {}
      : { fallbackImage: deps.config.build.fallbackImage }),
  });
  return { cloned, definition };
}

// 9. key from the checkout: the key from the read set checked out (or why there is none).
export function keyFromCheckout(
  job: Cloned,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
): Promise<Keyed | string> {
  const { plan, deps, signal, open } = job;
  const { cloned, definition } = checkedOut;
  return guardedKey(signal, () =>
    checkoutKey({
      plan,
      deps,
      cloneDir: cloned.dir,
      definition,
      configBlobId: cloned.definition?.blobId,
      listing: open.located?.listing,
      log: imgLog,
      signal,
    }),
  );
}

// 12. build and push: `devcontainer build` on the build's builder, pushed to the target (img log).
export async function buildAndPush(
  job: Cloned,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
  key: string,
): Promise<string> {
  const steps = new StepTracker();
  try {
    return await devcontainerBuildSteps(job, checkedOut, tappedLog(imgLog, steps), key);
  } finally {
    await reportSteps(job, steps);
  }
}

/** `devcontainer build` itself, its output to `imgLog`. */
async function devcontainerBuildSteps(
  job: Cloned,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
  key: string,
): Promise<string> {
  const { plan, deps, dir, signal, soFar } = job;
  const pushed = await devcontainerBuild({
    plan,
    deps,
    dir,
    workspaceFolder: checkedOut.cloned.dir,
    configFile: checkedOut.definition.configFile,
    dockerfileBased: checkedOut.definition.dockerfileBased,
    imageRef: soFar.image,
    origin: { ...job.source, built: new Date().toISOString(), key },
    signal,
    log: imgLog,
    cli: job.cli(),
  });
  return pushed.logId;
}

// 13. record the image: the digest the registry serves for its tag (signed when a key is
// configured), and its key.
export async function recordImage(
  job: Cloned,
  keyed: Keyed | undefined,
  imageBuildLogId: string,
  imgLog: CommandLogWriter,
): Promise<BuildResult> {
  const digest = await readPushedDigest(job, imgLog);
  await reportPushed(job, digest, imgLog);
  if (keyed !== undefined) {
    const { plan, deps, source, target } = job;
    await recordBuiltKey({ plan, deps, source, target, log: imgLog }, keyed);
  }
  return { ...job.soFar, imageBuildLogId, digest };
}

/** The outcome of a decision that ends the job early: the reused result, or following. */
export function answered(
  job: Cloned,
  decision: Exclude<Decision, { kind: 'build' }>,
  log: CommandLogWriter,
): JobOutcome {
  if (decision.kind === 'wait') return { ...decision, soFar: job.soFar, log, source: job.source };
  return { ...job.soFar, imageBuildLogId: log.id, digest: decision.digest };
}

/** The waits before each new read of the pushed digest (a registry unavailable for a moment). */
const DIGEST_RETRIES_MS = [1000, 2000, 4000, 8000];

/** The digest the registry serves for the pushed tag, read again while it fails (about 15 s). */
function pushedDigestRead(job: Cloned, access: ReturnType<typeof registryAccess>): Promise<string> {
  return retryAfterDelays(() => pushedDigest(job.target, access), {
    delaysMs: DIGEST_RETRIES_MS,
    signal: job.signal,
  });
}

/** The pushed digest, signed when a key is configured; a failure is the build's (500, img log). */
async function readPushedDigest(job: Cloned, log: CommandLogWriter): Promise<string> {
  const access = registryAccess(job.plan, job.deps);
  let digest: string;
  try {
    digest = await pushedDigestRead(job, access);
    log.write(`# pushed ${job.soFar.image} is ${digest}\n`);
  } catch (err) {
    log.write(`# the pushed image's digest could not be read (${reasonOf(err)})\n`);
    throw serviceError('STEP_FAILED', { step: 'reading the pushed digest' }, { logId: log.id, cause: err });
  }
  try {
    const signed = await signAnswered(job.target, digest, access);
    if (signed !== undefined) log.write(signed);
  } catch (err) {
    log.write(`# ${digest} could not be signed (${reasonOf(err)})\n`);
    throw serviceError('STEP_FAILED', { step: 'signing the pushed image' }, { logId: log.id, cause: err });
  }
  return digest;
}
