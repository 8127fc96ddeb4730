/**
 * The retention policy as a pure planner (docs/retention.md): for one repository snapshot, each
 * service image kept (and why) or deleted, with the steps of its deletion. A deletion never names a
 * digest a kept tag still reaches (directly or as a child), and a build key whose image goes moves
 * first to a kept image with that key, so a reuse never becomes a rebuild.
 */
import { type RepositorySnapshot, type ServedTimes, type ServiceImage, servedTag } from './snapshot-types.js';

export interface RetentionPolicy {
  readonly keepPerBranch: number;
  readonly keepServedDays: number;
  readonly keepTags: readonly string[];
}

/** One step of a deletion: a manifest deleted by digest, or a build-key tag moved to a kept image. */
export interface DeleteStep {
  readonly action: 'delete' | 'move';
  /** delete: the digest; move: the build-key tag. */
  readonly target: string;
  /** move: the digest the tag moves to. */
  readonly to?: string;
  /** What the answer and the log name: `<repository>@<digest>` or `<repository>:<tag>`, and what it is. */
  readonly reference: string;
}

export interface PlannedImage {
  readonly image: ServiceImage;
  readonly lastServedMs: number;
  readonly action: 'keep' | 'delete';
  readonly reason: string;
  /** Empty for a kept image. */
  readonly steps: readonly DeleteStep[];
}

export interface RepositoryPlan {
  readonly repository: string;
  readonly images: readonly PlannedImage[];
}

const DAY_MS = 24 * 3600 * 1000;

/** Whether `tag` matches the glob (`*` any run, `?` one character). */
export function globMatches(glob: string, tag: string): boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(tag);
}

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function lastServed(image: ServiceImage, served: ServedTimes): number {
  return Math.max(image.builtMs, served.get(image.digest) ?? 0, served.get(servedTag(image.tag)) ?? 0);
}

/** Newest first (build time), then by tag: the order of "the newest N". */
const newestFirst = (a: ServiceImage, b: ServiceImage): number =>
  b.builtMs - a.builtMs || (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0);

/** Each image's rank within its git repository and branch (0 is the newest). */
function ranks(images: readonly ServiceImage[]): Map<ServiceImage, number> {
  const groups = new Map<string, ServiceImage[]>();
  for (const image of images) {
    const id = `${image.source}\n${image.branch}`;
    groups.set(id, [...(groups.get(id) ?? []), image]);
  }
  const out = new Map<ServiceImage, number>();
  for (const group of groups.values()) [...group].sort(newestFirst).forEach((image, i) => out.set(image, i));
  return out;
}

interface Verdict {
  readonly keep: boolean;
  readonly reason: string;
}

/** The rules in order: kept tag, newest N of the branch, served in the last D days; else delete. */
function verdictOf(
  policy: RetentionPolicy,
  image: ServiceImage,
  rank: number,
  servedMs: number,
  nowMs: number,
): Verdict {
  const { keepPerBranch: n, keepServedDays: days, keepTags } = policy;
  const keptTag =
    keepTags.length > 0
      ? keepTags.some((glob) => globMatches(glob, image.tag))
      : image.namedTag === image.tag;
  if (keptTag) return { keep: true, reason: 'kept tag' };
  if (rank < n) return { keep: true, reason: `newest ${n} of branch ${image.branch}` };
  if (days > 0 && servedMs >= nowMs - days * DAY_MS) return { keep: true, reason: `served ${day(servedMs)}` };
  return {
    keep: false,
    reason: n > 0 ? `older than the newest ${n} of branch ${image.branch}` : `not served in ${days} days`,
  };
}

/** Every digest a kept tag reaches: kept images and other tags, with their children. */
function reachedBy(snapshot: RepositorySnapshot, kept: readonly ServiceImage[]): Map<string, string> {
  const reached = new Map<string, string>();
  for (const entry of [...snapshot.others, ...kept]) {
    for (const digest of [entry.digest, ...entry.children])
      if (!reached.has(digest)) reached.set(digest, entry.tag);
  }
  return reached;
}

/** The steps deleting `image`: key moves first, then its manifest, its children, its signatures. */
function stepsOf(
  snapshot: RepositorySnapshot,
  image: ServiceImage,
  kept: readonly ServiceImage[],
  reached: ReadonlyMap<string, string>,
): DeleteStep[] {
  const repo = snapshot.repository;
  const moves: DeleteStep[] = [];
  const goneTags = [image.tag];
  for (const keyTag of snapshot.keyTags.filter((k) => k.digest === image.digest)) {
    const heir = kept.filter((k) => k.key !== '' && k.key === keyTag.of).sort(newestFirst)[0];
    if (heir === undefined) goneTags.push(keyTag.tag);
    else
      moves.push({
        action: 'move',
        target: keyTag.tag,
        to: heir.digest,
        reference: `${repo}:${keyTag.tag} (moves to ${heir.tag}, ${heir.digest})`,
      });
  }
  const top: DeleteStep = {
    action: 'delete',
    target: image.digest,
    reference: `${repo}@${image.digest} (tags ${goneTags.join(', ')})`,
  };
  const children = image.children
    .filter((digest) => !reached.has(digest) && digest !== image.digest)
    .map((digest): DeleteStep => ({
      action: 'delete',
      target: digest,
      reference: `${repo}@${digest} (manifest under ${image.tag})`,
    }));
  const signatures = snapshot.signatureTags
    .filter((s) => s.of === image.digest && !reached.has(s.digest))
    .map((s): DeleteStep => ({ action: 'delete', target: s.digest, reference: `${repo}:${s.tag}` }));
  return [...moves, top, ...children, ...signatures];
}

/** The plan of one repository at `nowMs`. */
export function planRepository(
  snapshot: RepositorySnapshot,
  policy: RetentionPolicy,
  served: ServedTimes,
  nowMs: number,
): RepositoryPlan {
  const rank = ranks(snapshot.images);
  const verdicts = new Map<ServiceImage, Verdict>();
  for (const image of snapshot.images) {
    verdicts.set(image, verdictOf(policy, image, rank.get(image) ?? 0, lastServed(image, served), nowMs));
  }
  // A digest a kept tag reaches stays, and keeps the tag that would have deleted it (until stable).
  for (let changed = true; changed;) {
    changed = false;
    const kept = snapshot.images.filter((image) => verdicts.get(image)?.keep === true);
    const reached = reachedBy(snapshot, kept);
    for (const image of snapshot.images.filter((i) => verdicts.get(i)?.keep === false)) {
      const by = reached.get(image.digest);
      if (by !== undefined && by !== image.tag) {
        verdicts.set(image, { keep: true, reason: `its manifest is also under kept tag ${by}` });
        changed = true;
      }
    }
  }
  const kept = snapshot.images.filter((image) => verdicts.get(image)?.keep === true);
  const reached = reachedBy(snapshot, kept);
  const images = [...snapshot.images].sort(newestFirst).map((image): PlannedImage => {
    const verdict = verdicts.get(image) ?? { keep: true, reason: 'kept tag' };
    return {
      image,
      lastServedMs: lastServed(image, served),
      action: verdict.keep ? 'keep' : 'delete',
      reason: verdict.reason,
      steps: verdict.keep ? [] : stepsOf(snapshot, image, kept, reached),
    };
  });
  return { repository: snapshot.repository, images };
}
