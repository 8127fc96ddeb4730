/**
 * Clones the planned repository, partial and sparse, into the request's directory under the hardened
 * git environment (git-env.ts), its output in a `git-*` log (docs/behaviour.md, Clones). Every fetch
 * happens here; the credentials' 0600 files are removed when the clone ends. Two steps: `openClone`
 * gives the commit, branch and trees (what the definition and the build key need first); then
 * `checkout` fetches the read set and seals the clone, or `end` closes it with nothing checked out.
 */
import { rm } from 'node:fs/promises';
import { serviceError } from '../../src/errors/errors.js';
import { stepFailure } from '../../src/exec/failure.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import { run, type RunOptions } from '../../src/exec/run.js';
import { withSpan } from '../../src/observability/tracing.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { RequestDir } from '../common/request-dir.js';
import type { ReadPath } from '../builder/read-set.js';
import {
  type CommitDefinition,
  type GitCapture,
  gitTreeLister,
  type LocatedDefinition,
  locateDefinition,
  type TreeLister,
  readDefinition,
} from './commit-definition.js';
import { placeBlobs, rememberBlobs, seedBlobs, type BlobStore } from './blob-seed.js';
import { cloneArgs, withGitConfig } from './git-env.js';
import { gitSecrets, requestGitEnv } from './request-git-env.js';
import { describeReadSet } from './sparse-patterns.js';
import type { ChangedFiles } from './tree-changes.js';
import {
  checkoutReadSet,
  nonBlobObjects,
  promisorRemoteConfig,
  sealClone,
  setSparsePaths,
  storedObjects,
  widenReadSet,
} from './sparse-checkout.js';
import { sideBySide } from '../../src/logs/side-by-side.js';
import { GIT_OBJECT_ID_PATTERN } from '../../src/rules/text-patterns.js';

export interface ClonedRepository {
  /** The clone's working tree: only the read set is checked out. */
  readonly dir: string;
  /** The branch or tag built: the requested one, else the default branch's name. */
  readonly branch: string;
  /** Full commit SHA of HEAD. */
  readonly commit: string;
  readonly logId: string;
  /** The definition found in the commit's trees (path, text, parsed), undefined when none. */
  readonly definition?: CommitDefinition;
  /** What the build reads: the paths checked out (builder/read-set.ts). */
  readonly readSet: readonly ReadPath[];
  /** False when the server ignored the filter and sent every file (the result is the same). */
  readonly partial: boolean;
}

const COMMIT = new RegExp(GIT_OBJECT_ID_PATTERN);

/** The log with NULs (of `-z` listings) shown as line breaks. */
function readableLog(log: CommandLogWriter): CommandLogWriter {
  return {
    id: log.id,
    write: (chunk) => log.write(typeof chunk === 'string' ? chunk.replaceAll('\0', '\n') : chunk),
    addSecrets: (secrets) => log.addSecrets(secrets),
    close: () => log.close(),
  };
}

/**
 * A clone of the commit's trees (no file content yet), its credentials still in place: what the
 * definition and the build key need first. `checkout` fetches and checks out the read set and
 * seals the clone (what a build needs); `end` finishes it without any checkout (the caller then
 * removes the directory, running nothing in it). Either ends it: credentials removed, log closed.
 */
export interface OpenClone {
  readonly dir: string;
  readonly branch: string;
  readonly commit: string;
  readonly logId: string;
  /** The definition's place in the commit's trees (with the listing around it); undefined: none. */
  readonly located: LocatedDefinition | undefined;
  /** The commit's trees at some paths (`git ls-tree` in the clone, or read in process). */
  readonly listPaths: TreeLister;
  /** The files under changed paths since an earlier build: only when the trees were read in process. */
  readonly changedFiles?: ChangedFiles;
  checkout(): Promise<ClonedRepository>;
  /** Idempotent; a no-op once `checkout` has run. `note`: a last line for the clone's log. */
  end(note?: string): Promise<void>;
}

type CloneDeps = Pick<StepDeps, 'config' | 'logStore' | 'groups'> & { readonly blobs?: BlobStore };

/** What the steps of one clone share: its request, its log and its git commands. */
interface Clone {
  readonly plan: BuildPlan;
  readonly deps: CloneDeps;
  readonly dir: RequestDir;
  readonly log: CommandLogWriter;
  /** The options of every git command of the clone. */
  readonly options: RunOptions;
  /** `git -C <clone> <args>` capturing stdout, its output in `to`; `env`: instead of the request's. */
  capture(to: CommandLogWriter, env?: Record<string, string>): GitCapture;
  /**
   * As capture, the promisor remote in its environment: only the checkout and the widening can
   * fetch (the clone's config loses it in the seal).
   */
  fetchingGit(to: CommandLogWriter): GitCapture;
}

/** The git commands of one clone, sharing one budget (the clone timeout). */
async function cloneGit(
  plan: BuildPlan,
  deps: CloneDeps,
  dir: RequestDir,
  log: CommandLogWriter,
  signal: AbortSignal,
): Promise<Clone> {
  const { config } = deps;
  const options: RunOptions = {
    baseEnv: await requestGitEnv(plan, config, dir),
    log,
    signal,
    groups: deps.groups,
    secrets: gitSecrets(plan),
    timeoutSeconds: config.build.cloneTimeoutSeconds,
  };
  const deadline = performance.now() + config.build.cloneTimeoutSeconds * 1000;
  const remaining = (): number =>
    config.build.cloneTimeoutSeconds > 0 ? Math.max(1, Math.ceil((deadline - performance.now()) / 1000)) : 0;
  const capture =
    (to: CommandLogWriter, env?: Record<string, string>): GitCapture =>
    async (args) =>
      (
        await run('git', ['-C', dir.clone, ...args], {
          ...options,
          ...(env === undefined ? {} : { baseEnv: env }),
          timeoutSeconds: remaining(),
          log: readableLog(to),
          captureStdout: true,
        })
      ).stdout;
  const fetchingGit = (to: CommandLogWriter): GitCapture =>
    capture(to, withGitConfig(options.baseEnv, promisorRemoteConfig(plan.url.cloneUrl)));
  return { plan, deps, dir, log, options, capture, fetchingGit };
}

/**
 * Before anything is fetched: the commit and branch (one process for both: the full commit, then
 * the checked-out branch's short name; first, so a clone without HEAD fails here), where the
 * definition is, and what the clone stores.
 */
async function readHead(clone: Clone) {
  const { capture } = clone;
  const [head, located, stored] = await sideBySide(clone.log, [
    (to) => capture(to)(['rev-parse', 'HEAD', '--abbrev-ref', 'HEAD']),
    (to) => locateDefinition(gitTreeLister(capture(to), 'HEAD')),
    (to) => storedObjects(capture(to)),
  ] as const);
  const [commit = '', headName = ''] = head.trim().split('\n');
  if (!COMMIT.test(commit))
    throw serviceError('COMMAND_OUTPUT_UNEXPECTED', { command: 'git rev-parse HEAD --abbrev-ref HEAD' });
  return { commit, branch: clone.plan.branch ?? headName.trim(), located, stored };
}

/** The definition's own place from this instance's blob cache when it holds them; whether it did. */
async function seedOwnPlace(
  clone: Clone,
  located: LocatedDefinition | undefined,
): Promise<{ entries: ReturnType<typeof placeBlobs> | undefined; seeded: boolean }> {
  const { blobs } = clone.deps;
  const entries =
    blobs === undefined || located === undefined ? undefined : placeBlobs(located.listing, located.ownPlace);
  const seeded =
    blobs !== undefined &&
    entries !== undefined &&
    (await seedBlobs(clone.capture(clone.log), blobs, clone.plan.repository, entries, clone.dir.generated));
  if (seeded)
    clone.log.write(
      "# the definition's files from this instance's blob cache (same object ids): not fetched\n",
    );
  return { entries, seeded };
}

/**
 * The definition's own place (one fetch, which also brings the config's blob), alongside the read
 * the fetch does not change (non-blob objects) and the seal; then, only if the definition names
 * more, the rest of its read set.
 */
async function checkoutAndSeal(
  clone: Clone,
  located: LocatedDefinition | undefined,
  stored: number,
): Promise<Pick<ClonedRepository, 'definition' | 'readSet' | 'partial'>> {
  const { capture, fetchingGit, log, dir } = clone;
  const ownPlace = located?.ownPlace ?? [];
  const { entries, seeded } = await seedOwnPlace(clone, located);
  await setSparsePaths(dir.clone, ownPlace);
  // The checkout first: its process starts before the others'.
  const [, nonBlobs] = await sideBySide(log, [
    (to) => checkoutReadSet(fetchingGit(to), ownPlace),
    (to) => nonBlobObjects(capture(to)),
    (to) => sealClone(capture(to)),
  ] as const);
  const partial = stored <= nonBlobs;
  const { blobs } = clone.deps;
  if (blobs !== undefined && entries !== undefined && !seeded)
    await rememberBlobs(blobs, clone.plan.repository, entries, dir.clone);
  const found = await readDefinition(capture(log), dir.clone, located);
  if (describeReadSet(found.readSet) !== describeReadSet(ownPlace))
    await widenReadSet(fetchingGit(log), dir.clone, found.readSet);
  log.write(
    partial
      ? `# partial clone (blob:none), sparse paths: ${describeReadSet(found.readSet)}\n`
      : `# server does not support filters: full clone, sparse paths: ${describeReadSet(found.readSet)}\n`,
  );
  return {
    readSet: found.readSet,
    partial,
    ...(found.definition === undefined ? {} : { definition: found.definition }),
  };
}

/** What an open clone continues: the git log already opened, the commit already read (tree-clone.ts). */
export interface CloneContinuing {
  readonly log: CommandLogWriter;
  readonly commit: string;
}

/**
 * The clone at `commit` when its branch moved on since the commit was read: that commit fetched
 * and the clone's HEAD set to it (rare: the branch moved in between).
 */
async function pinCommit(clone: Clone, commit: string): Promise<void> {
  clone.log.write(`# the branch moved on since ${commit} was read: fetching that commit\n`);
  const git = clone.capture(clone.log);
  await git(['fetch', '--depth', '1', '--filter=blob:none', '--no-tags', 'origin', commit]);
  await git(['update-ref', 'HEAD', commit]);
}

/**
 * Clone, read the commit, locate the definition from the trees; the clone stays open (see
 * OpenClone). `continuing`: the log to write to, and the commit the clone must be at.
 */
export async function openClone(
  plan: BuildPlan,
  deps: CloneDeps,
  dir: RequestDir,
  signal: AbortSignal,
  continuing?: CloneContinuing,
): Promise<OpenClone> {
  const log = continuing?.log ?? (await deps.logStore.open('git', gitSecrets(plan)));
  let ended = false;
  const end = async (note?: string): Promise<void> => {
    if (ended) return;
    ended = true;
    if (note !== undefined) log.write(`# ${note}\n`);
    await rm(dir.gitSecrets, { recursive: true, force: true }).catch(() => undefined);
    await log.close();
  };
  const span = { 'git.scheme': plan.url.scheme, 'git.host': plan.url.host, 'log.id': log.id };
  try {
    return await withSpan('git.clone', span, async () => {
      const clone = await cloneGit(plan, deps, dir, log, signal);
      await run('git', cloneArgs(plan.url.cloneUrl, dir.clone, plan.branch), clone.options);
      let head = await readHead(clone);
      if (continuing !== undefined && head.commit !== continuing.commit) {
        await pinCommit(clone, continuing.commit);
        head = { ...(await readHead(clone)), branch: head.branch };
      }
      const { commit, branch, located, stored } = head;
      const checkout = async (): Promise<ClonedRepository> => {
        try {
          const found = await withSpan('git.checkout', { 'log.id': log.id }, () =>
            checkoutAndSeal(clone, located, stored),
          );
          return { dir: dir.clone, branch, commit, logId: log.id, ...found };
        } catch (err) {
          throw stepFailure(err, 'git clone', log);
        } finally {
          await end();
        }
      };
      return {
        dir: dir.clone,
        branch,
        commit,
        logId: log.id,
        located,
        listPaths: gitTreeLister(clone.capture(log), 'HEAD'),
        checkout,
        end,
      };
    });
  } catch (err) {
    const failure = stepFailure(err, 'git clone', log);
    await end();
    throw failure;
  }
}
