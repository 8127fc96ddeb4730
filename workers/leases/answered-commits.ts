/**
 * The commits this service answered, by request shape (docs/reuse.md, Answered commits): when a
 * branch's head is a commit answered before for the same shape, the request is answered from that
 * record without a clone. Embedded mode keeps them in memory; Redis mode shares them between
 * replicas (redis-answered-commits.ts). Only image references, digests and the key's movable
 * inputs are kept: no request, no credential.
 */

/** A base image or OCI feature referenced by tag, and the digest it had when the commit was answered. */
export interface MovableReference {
  readonly ref: string;
  readonly digest: string;
  readonly what: 'base image' | 'feature';
}

/** One commit answered for a request shape. */
export interface AnsweredCommit {
  readonly commit: string;
  /** The branch the answer named (the default branch's name when the request named none). */
  readonly branch: string;
  readonly registry: string;
  readonly name: string;
  readonly tag: string;
  readonly digest: string;
  readonly key: string;
  /** What can move under the same commit: references by tag, with their digests then. */
  readonly movable: readonly MovableReference[];
  /** The Dev Containers CLI and build-process versions the key was computed with. */
  readonly cliVersion: string;
  readonly buildProcessVersion: number;
  /** ms since the epoch. */
  readonly answeredAt: number;
}

export interface AnsweredCommits {
  /** The commits answered for `shape`, by commit (the newest few). */
  get(shape: string): Promise<ReadonlyMap<string, AnsweredCommit>>;
  /** Remembers (or replaces) the answer for `answer.commit`. */
  set(shape: string, answer: AnsweredCommit): Promise<void>;
  /** Forgets the answer for `commit` (its image is gone or was replaced). */
  forget(shape: string, commit: string): Promise<void>;
}

/** Commits kept per request shape: the newest first, enough for the branches' recent heads. */
export const MAX_COMMITS_PER_SHAPE = 16;
/** Request shapes kept in memory (the least recently answered go first). */
const MAX_SHAPES = 2000;

/** The `max` newest answers of `answers` (pure). */
export function newest(answers: Iterable<AnsweredCommit>, max = MAX_COMMITS_PER_SHAPE): AnsweredCommit[] {
  return [...answers].sort((a, b) => b.answeredAt - a.answeredAt).slice(0, max);
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** An answer read back from JSON (a shared store), or undefined when its shape is not one. */
export function parseAnswered(text: string): AnsweredCommit | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ['commit', 'branch', 'registry', 'name', 'tag', 'digest', 'key', 'cliVersion'];
  if (!strings.every((k) => isString(v[k]))) return undefined;
  if (typeof v.buildProcessVersion !== 'number' || typeof v.answeredAt !== 'number') return undefined;
  if (!Array.isArray(v.movable)) return undefined;
  const movable = v.movable.filter(
    (reference): reference is MovableReference =>
      typeof reference === 'object' &&
      reference !== null &&
      isString((reference as Record<string, unknown>).ref) &&
      isString((reference as Record<string, unknown>).digest) &&
      ['base image', 'feature'].includes(String((reference as Record<string, unknown>).what)),
  );
  if (movable.length !== v.movable.length) return undefined;
  return value as AnsweredCommit;
}

/** Embedded mode: the answered commits of this instance, in memory. */
export function createMemoryAnsweredCommits(maxShapes = MAX_SHAPES): AnsweredCommits {
  const shapes = new Map<string, Map<string, AnsweredCommit>>();
  return {
    get: (shape) => Promise.resolve(new Map(shapes.get(shape) ?? [])),
    set: (shape, answer) => {
      const current = shapes.get(shape) ?? new Map<string, AnsweredCommit>();
      current.set(answer.commit, answer);
      shapes.delete(shape);
      shapes.set(shape, new Map(newest(current.values()).map((a) => [a.commit, a])));
      while (shapes.size > maxShapes) {
        const oldest = shapes.keys().next().value;
        if (oldest === undefined) break;
        shapes.delete(oldest);
      }
      return Promise.resolve();
    },
    forget: (shape, commit) => {
      shapes.get(shape)?.delete(commit);
      return Promise.resolve();
    },
  };
}
