/**
 * Answered commits (docs/reuse.md): a request whose branch head (one listing of refs) was answered
 * for the same request shape is answered from that record, with no clone, once its image is still
 * served under its tag and the references by tag still have their digests. Anything else takes
 * the full path, the img log saying why. The records: the leases' store (memory, or Redis).
 */
import { reasonOf } from '../../src/errors/errors.js';
import type { AnsweredCommit, MovableReference } from '../leases/answered-commits.js';
import { parseImageString } from '../../src/registry/image-string.js';
import { remoteHead, type ListedVia } from '../git/ls-remote.js';
import { devcontainerCliVersion } from '../builder/devcontainer-build.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { BUILD_PROCESS_VERSION } from './build-key.js';
import type { Keyed } from './checkout-key.js';
import { keyDeps } from './checkout-key.js';
import { resolve } from './key-inputs.js';
import { registryAccess, type ReuseStepDeps } from './reuse-deps.js';
import { servedDigest, signAnswered } from './reuse-image.js';
import { TaggedImageTarget } from '../../src/rules/image-target.js';
import { requestShape } from './request-identity.js';

/** The key's inputs that can move under the same commit: references by tag (pure). */
export function movableReferences(keyed: Keyed, insecureRegistries: readonly string[]): MovableReference[] {
  const byTag = (ref: string): boolean => parseImageString(ref, insecureRegistries)?.digest === undefined;
  return [
    ...keyed.input.baseImages
      .filter((r) => byTag(r.ref))
      .map((r): MovableReference => ({ ref: r.ref, digest: r.digest, what: 'base image' })),
    ...keyed.input.features
      .filter((r) => byTag(r.ref))
      .map((r): MovableReference => ({ ref: r.ref, digest: r.digest, what: 'feature' })),
  ];
}

export type MemoDeps = Pick<StepDeps, 'config' | 'groups'> & ReuseStepDeps;

/** What the memo answers: the record and what to log; or why not (nothing to say when no record could apply). */
export type MemoOutcome =
  | {
      readonly kind: 'answered';
      readonly answer: AnsweredCommit;
      /** The commit the branch points at (the record's). */
      readonly head: string;
      /** How the branch's head was looked up. */
      readonly via: ListedVia;
      /** Lines for the img log (the signature). */
      readonly notes: readonly string[];
    }
  | { readonly kind: 'missed'; readonly why?: string };

/** Why `answer` no longer answers this request (undefined: it does); forgets it when its image is gone. */
async function staleness(
  plan: BuildPlan,
  deps: MemoDeps,
  shape: string,
  answer: AnsweredCommit,
  notes: string[],
): Promise<string | undefined> {
  if (answer.cliVersion !== devcontainerCliVersion() || answer.buildProcessVersion !== BUILD_PROCESS_VERSION)
    return 'it was answered by another Dev Containers CLI or build process';
  const access = registryAccess(plan, deps);
  const target = new TaggedImageTarget(answer.registry, answer.name, answer.tag);
  const key = keyDeps(plan, deps);
  // The image, every movable reference and the signature at once: one round trip each.
  const [served, moved, signed] = await Promise.all([
    servedDigest(target, access),
    Promise.all(
      answer.movable.map(async (was) => {
        const now = await resolve(was.ref, was.what, key).catch((err: unknown) => ({
          digest: reasonOf(err),
        }));
        return now.digest === was.digest
          ? undefined
          : `${was.what} ${was.ref}: ${was.digest} -> ${now.digest}`;
      }),
    ),
    signAnswered(target, answer.digest, access).catch((err: unknown) => new Error(reasonOf(err))),
  ]);
  if (served !== answer.digest) {
    await deps.reuse.leases.answered.forget(shape, answer.commit).catch(() => undefined);
    return served === undefined
      ? `its image ${target.image} is gone`
      : `${target.image} is now ${served}, not ${answer.digest}`;
  }
  const changed = moved.filter((line): line is string => line !== undefined);
  if (changed.length > 0) return `moved since: ${changed.join('; ')}`;
  if (signed instanceof Error) return `${answer.digest} could not be signed (${signed.message})`;
  if (signed !== undefined) notes.push(signed);
  return undefined;
}

/**
 * The answer the memo gives this request, before any clone: only when `plan`'s shape has answered
 * commits (otherwise not even `ls-remote` runs). Never throws: a failure is a miss.
 */
export async function answerFromMemo(
  plan: BuildPlan,
  deps: MemoDeps,
  signal: AbortSignal,
): Promise<MemoOutcome> {
  const shape = requestShape(plan, deps.config.build.fallbackImage);
  try {
    const answered = await deps.reuse.leases.answered.get(shape);
    if (answered.size === 0) return { kind: 'missed' };
    const { head, via } = await remoteHead(plan, deps, signal);
    const answer = head === undefined ? undefined : answered.get(head);
    if (head === undefined || answer === undefined) return { kind: 'missed' };
    const notes: string[] = [];
    const stale = await staleness(plan, deps, shape, answer, notes);
    if (stale !== undefined)
      return {
        kind: 'missed',
        why: `commit ${head} was answered before as ${answer.registry}/${answer.name}@${answer.digest}, but ${stale}`,
      };
    return { kind: 'answered', answer, head, via, notes };
  } catch (err) {
    if (signal.aborted) throw err;
    return { kind: 'missed', why: `answered commits not consulted (${reasonOf(err)})` };
  }
}

/** After a keyed answer (a reuse or a build): remembered for its shape. A failure is logged, never thrown. */
export async function rememberAnswer(
  plan: BuildPlan,
  deps: MemoDeps,
  keyed: Keyed,
  answer: Pick<AnsweredCommit, 'commit' | 'branch' | 'registry' | 'name' | 'tag' | 'digest'>,
): Promise<string | undefined> {
  try {
    await deps.reuse.leases.answered.set(requestShape(plan, deps.config.build.fallbackImage), {
      ...answer,
      key: keyed.key,
      movable: movableReferences(keyed, deps.config.insecureRegistries),
      cliVersion: keyed.input.cliVersion,
      buildProcessVersion: keyed.input.buildProcessVersion,
      answeredAt: Date.now(),
    });
    return undefined;
  } catch (err) {
    return `# answer not remembered for this commit (${reasonOf(err)})\n`;
  }
}
