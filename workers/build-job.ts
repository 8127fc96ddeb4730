/**
 * One build: directory -> clone (git log) -> with reuse on, the key from the trees when the blobs are
 * known and the reuse step (reused or followed: done, nothing checked out) -> else the read set
 * checked out and sealed -> definition -> key from the files, reuse step -> build and push (img log)
 * -> record the key (docs/reuse.md). A key's lease (Redis mode) is released with the outcome when
 * the job ends; the directory is removed whatever it is. Progress goes to the reporter.
 */
import type { BuiltImage, FollowedBuild, HeldLease } from './leases/leases.js';
import type { BuildReporter } from '../src/builds/types.js';
import { stepFailed } from '../src/errors/errors.js';
import { cancellationOf } from '../src/exec/cancellation.js';
import type { CommandLogWriter, LogStore } from '../src/logs/types.js';
import { resolveDefinition, type DevcontainerDefinition } from './builder/definition.js';
import { buildAndPush } from './builder/devcontainer-build.js';
import { startPendingCli, type PendingCli } from './builder/pending-cli.js';
import type { BuildDeps } from './build-deps.js';
import { openClone, type ClonedRepository, type OpenClone } from './git/clone.js';
import type { BuildPlan, BuildResult } from './plan/plan-types.js';
import { createRequestDir, removeRequestDir, type RequestDir } from './common/request-dir.js';
import type { LeadBuild } from './reuse/in-flight.js';
import { pushedDigest, signAnswered, type ReuseTarget } from './reuse/reuse-image.js';
import {
  afterBuild,
  guardedKey,
  keyDeps,
  keyFromCheckout,
  reasonOf,
  registryAccess,
  reuseStep,
  type Keyed,
} from './reuse/reuse-step.js';
import { keyFromTrees } from './reuse/tree-key.js';

/** Reuse for this job: its entry in the in-flight map, and whether it may follow another build. */
export interface JobReuse {
  readonly lead: LeadBuild<BuildResult>;
  readonly followAllowed: boolean;
  /** A line for the top of the img log (why this job builds after waiting for another build). */
  readonly note?: string;
}

/**
 * The job found a build with the same key in flight: it returns (freeing its slot) and the
 * caller waits for that build, then answers as a reuse. `log` stays open for the caller.
 */
export interface FollowBuild {
  readonly kind: 'follow';
  readonly build: FollowedBuild;
  readonly keyed: Keyed;
  readonly partial: Omit<BuildResult, 'imageBuildLogId' | 'digest'>;
  readonly log: CommandLogWriter;
}

export type JobOutcome = BuildResult | FollowBuild;

export const isFollow = (outcome: JobOutcome): outcome is FollowBuild =>
  (outcome as Partial<FollowBuild>).kind === 'follow';

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

export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
): Promise<BuildResult>;
export function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse: JobReuse | undefined,
): Promise<JobOutcome>;
export async function runBuildJob(
  plan: BuildPlan,
  buildDeps: BuildDeps,
  signal: AbortSignal,
  reporter: BuildReporter,
  reuse?: JobReuse,
): Promise<JobOutcome> {
  const deps: BuildDeps = { ...buildDeps, logStore: reportingLogStore(buildDeps.logStore, reporter) };
  const dir = await createRequestDir(deps.config.scratchDir);
  // The CLI loads while git runs; discarded unless the job builds. A job that may be answered from
  // the trees (reuse on) starts it only once it knows it will check out: an unchanged push, the
  // common case then, does not pay its start-up.
  let pending: PendingCli | undefined;
  const cli = (): PendingCli => (pending ??= startPendingCli(deps, { signal, secrets: plan.secrets }));
  // Reuse on and no noCache: the build key is computed (and may answer without a build).
  const keying = reuse !== undefined && !plan.noCache;
  if (!keying) cli();
  try {
    await reporter.phase('cloning');
    const open = await openClone(plan, { ...deps, blobs: deps.reuse.blobs }, dir, signal);
    try {
      reuse?.lead.setCommit(open.commit);
      const tag = plan.image.tag ?? `sha-${open.commit.slice(0, 7)}`;
      const image = `${plan.image.registry}/${plan.image.name}:${tag}`;
      await reporter.resolved({ branch: open.branch, commit: open.commit, image });
      await reporter.phase('resolving');
      const target = { registry: plan.image.registry, name: plan.image.name, tag };
      const partial = {
        image,
        registry: plan.image.registry,
        name: plan.image.name,
        tag,
        branch: open.branch,
        commit: open.commit,
        gitCloneLogId: open.logId,
      };
      return await buildOrReuse({
        plan,
        deps,
        dir,
        signal,
        reporter,
        reuse,
        keying,
        open,
        target,
        partial,
        cli,
      });
    } finally {
      await open.end();
    }
  } finally {
    await pending?.discard();
    await removeRequestDir(dir);
  }
}

interface JobState {
  readonly plan: BuildPlan;
  readonly deps: BuildDeps;
  readonly dir: RequestDir;
  readonly signal: AbortSignal;
  readonly reporter: BuildReporter;
  readonly reuse: JobReuse | undefined;
  /** Whether the build key is computed (reuse on, no noCache). */
  readonly keying: boolean;
  readonly open: OpenClone;
  readonly target: ReuseTarget;
  readonly partial: Omit<BuildResult, 'imageBuildLogId' | 'digest'>;
  /** The pending CLI, started on the first call. */
  readonly cli: () => PendingCli;
}

/**
 * What the reuse step decided: an outcome to return now, or the key to build with (if any); and
 * the key's lease when this job leads it across replicas.
 */
type Decided = ({ readonly outcome: JobOutcome } | { readonly build: Keyed | undefined }) & {
  readonly lease?: HeldLease;
};

/** The read set checked out, and the definition found in it. */
interface CheckedOut {
  readonly cloned: ClonedRepository;
  readonly definition: DevcontainerDefinition;
}

/** The reuse step for `key`, its log handed over when the job follows another build. */
async function decide(
  job: JobState,
  reuse: JobReuse,
  log: CommandLogWriter,
  key: Keyed | string,
  started: number,
): Promise<Decided> {
  const { open, partial } = job;
  const decision = await reuseStep(
    {
      plan: job.plan,
      deps: job.deps,
      branch: open.branch,
      commit: open.commit,
      target: job.target,
      log,
      lead: reuse.lead,
      followAllowed: reuse.followAllowed,
    },
    key,
    started,
  );
  if (decision.kind === 'follow')
    return { outcome: { kind: 'follow', build: decision.build, keyed: decision.keyed, partial, log } };
  const lease = decision.lease === undefined ? {} : { lease: decision.lease };
  if (decision.kind === 'reused')
    return { outcome: { ...partial, imageBuildLogId: log.id, digest: decision.digest }, ...lease };
  return { build: decision.keyed, ...lease };
}

/**
 * The digest the registry serves for the tag just pushed, signed when a key is configured; a
 * failure is the build's (500, img log).
 */
async function readPushedDigest(job: JobState, log: CommandLogWriter): Promise<string> {
  const access = registryAccess(job.plan, job.deps);
  let digest: string;
  try {
    digest = await pushedDigest(job.target, access);
    log.write(`# pushed ${job.partial.image} is ${digest}\n`);
  } catch (err) {
    log.write(`# the pushed image's digest could not be read (${reasonOf(err)})\n`);
    throw stepFailed('reading the pushed digest', log.id, err);
  }
  try {
    const signed = await signAnswered(job.target, digest, access);
    if (signed !== undefined) log.write(signed);
  } catch (err) {
    log.write(`# ${digest} could not be signed (${reasonOf(err)})\n`);
    throw stepFailed('signing the pushed image', log.id, err);
  }
  return digest;
}

/** The key from the commit's trees alone (no checkout), or undefined; a failure is undefined too. */
async function treeKey(job: JobState): Promise<Keyed | undefined> {
  const { plan, deps, open } = job;
  try {
    return await keyFromTrees(
      {
        repository: plan.repository,
        located: open.located,
        git: open.git,
        fallbackImage: deps.config.build.fallbackImage,
        blobs: deps.reuse.blobs,
      },
      keyDeps(plan, deps),
    );
  } catch (err) {
    if (cancellationOf(job.signal.reason) !== undefined) throw err;
    return undefined;
  }
}

/**
 * What a job settles when it ends, whatever its path: the img log (opened on first use, the
 * reuse note first; closed, unless handed over with a follow) and the key's lease (released with
 * the image the job answered; with none when it failed or follows another build).
 */
class JobEnding {
  readonly #job: JobState;
  #log: CommandLogWriter | undefined;
  #lease: HeldLease | undefined;
  #outcome: JobOutcome | undefined;

  constructor(job: JobState) {
    this.#job = job;
  }

  /** The img log, opened now if it is not yet. */
  async log(): Promise<CommandLogWriter> {
    if (this.#log !== undefined) return this.#log;
    const { plan, deps, reuse } = this.#job;
    const opened = await deps.logStore.open('img', plan.secrets);
    if (reuse?.note !== undefined) opened.write(reuse.note);
    this.#log = opened;
    return opened;
  }

  /** A decision of the reuse step: its lease (if any) is now the job's to release. */
  decided(decided: Decided): Decided {
    this.#lease = decided.lease;
    return decided;
  }

  /** The job's outcome: a result is what the lease is released with; a follow keeps the log open. */
  ended(outcome: JobOutcome): JobOutcome {
    this.#outcome = outcome;
    return outcome;
  }

  async close(): Promise<void> {
    const outcome = this.#outcome;
    const built: BuiltImage | undefined = outcome === undefined || isFollow(outcome) ? undefined : outcome;
    // The builds that follow this one on other replicas learn where its image is (or that it failed).
    await this.#lease?.release(built);
    if (outcome === undefined || !isFollow(outcome)) await this.#log?.close();
  }
}

/** With reuse on: the key from the commit's trees and its decision; undefined when there is no such key. */
async function decideFromTrees(job: JobState, ending: JobEnding): Promise<Decided | undefined> {
  const { reuse } = job;
  if (reuse === undefined || !job.keying) return undefined;
  const started = performance.now();
  const fromTrees = await treeKey(job);
  if (fromTrees === undefined) return undefined;
  const treeLog = await ending.log();
  treeLog.write("# build inputs read from the commit's trees and blobs an earlier build read\n");
  return ending.decided(await decide(job, reuse, treeLog, fromTrees, started));
}

/** The read set checked out, and the definition found in it. */
async function checkOut(job: JobState): Promise<CheckedOut> {
  const { deps, dir } = job;
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

/** With reuse on and no key from the trees: the key from the checked-out files and its decision. */
async function decideFromCheckout(
  job: JobState,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
  ending: JobEnding,
): Promise<Decided | undefined> {
  const { plan, deps, signal, reuse, open } = job;
  if (reuse === undefined) return undefined;
  if (!job.keying) {
    imgLog.write('# buildOptions.noCache: building without looking for an earlier image\n');
    return undefined;
  }
  const { cloned, definition } = checkedOut;
  const started = performance.now();
  const key = await guardedKey(signal, () =>
    keyFromCheckout({
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
  return ending.decided(await decide(job, reuse, imgLog, key, started));
}

/** The build and push, the pushed digest, and the key recorded (when there is one). */
async function build(
  job: JobState,
  checkedOut: CheckedOut,
  imgLog: CommandLogWriter,
  keyed: Keyed | undefined,
): Promise<BuildResult> {
  const { plan, deps, dir, signal, open, partial } = job;
  await job.reporter.phase('building');
  const pushed = await buildAndPush({
    plan,
    deps,
    dir,
    workspaceFolder: checkedOut.cloned.dir,
    configFile: checkedOut.definition.configFile,
    dockerfileBased: checkedOut.definition.dockerfileBased,
    imageRef: partial.image,
    commit: open.commit,
    retention: {
      branch: open.branch,
      built: new Date().toISOString(),
      namedTag: plan.image.tag ?? '',
      key: keyed?.key ?? '',
    },
    signal,
    log: imgLog,
    cli: job.cli(),
  });
  const digest = await readPushedDigest(job, imgLog);
  if (keyed !== undefined) {
    await afterBuild({ plan, deps, branch: open.branch, target: job.target, log: imgLog }, keyed);
  }
  return { ...partial, imageBuildLogId: pushed.logId, digest };
}

/**
 * With reuse on, the key is first computed from the commit's trees (tree-key.ts): an unchanged
 * push is then answered, or handed to the build in flight with its key, without any checkout.
 * Otherwise the clone's read set is checked out, the definition checked, and (reuse on, no key
 * yet) the key computed from the files; then the build.
 */
async function buildOrReuse(job: JobState): Promise<JobOutcome> {
  const ending = new JobEnding(job);
  try {
    const fromTrees = await decideFromTrees(job, ending);
    if (fromTrees !== undefined && 'outcome' in fromTrees) {
      await job.open.end('build inputs known from the trees and unchanged: nothing checked out');
      return ending.ended(fromTrees.outcome);
    }
    job.cli();
    const checkedOut = await checkOut(job);
    const imgLog = await ending.log();
    const decided = fromTrees ?? (await decideFromCheckout(job, checkedOut, imgLog, ending));
    if (decided !== undefined && 'outcome' in decided) return ending.ended(decided.outcome);
    const keyed = decided !== undefined && 'build' in decided ? decided.build : undefined;
    return ending.ended(await build(job, checkedOut, imgLog, keyed));
  } finally {
    await ending.close();
  }
}
