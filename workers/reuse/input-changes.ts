/**
 * What differs between two build key records (pure): each input by name with its old and new
 * value (a path by its git object id, a base image or feature by its digest), and the one line
 * the build log and the record's `rebuiltBecause.inputs` say it with. The secrets identity is
 * never shown, only that it differs.
 */
import type { BuildKeyInput, KeyedPath, KeyedReference } from './build-key.js';

/** One input that differs; `before`/`after` absent where no value may be shown. */
export interface InputChange {
  /** The input as the key's inputs name it: `config file`, `path .devcontainer`, `base image <ref>`. */
  readonly input: string;
  readonly before?: string;
  readonly after?: string;
  /** For a path of the read set: the path and its kind. */
  readonly path?: Pick<KeyedPath, 'path' | 'kind'>;
}

const ABSENT = 'absent';
const shortId = (id: string): string => (id === ABSENT ? id : id.slice(0, 12));
const pathName = (path: string): string => (path === '' ? '/ (the repository root)' : path);

/** The log's line for one change: `path .devcontainer: 1a2b3c4d5e6f -> 6f5e4d3c2b1a`. */
export function describeChange(change: InputChange): string {
  const { input, before, after, path } = change;
  if (path !== undefined)
    return `path ${pathName(path.path)}: ${shortId(before ?? ABSENT)} -> ${shortId(after ?? ABSENT)}`;
  if (input === 'config file') return 'the config file';
  if (before === undefined || after === undefined) return `${input}: other values`;
  return `${input}: ${before} -> ${after}`;
}

function pathChanges(before: readonly KeyedPath[], after: readonly KeyedPath[]): InputChange[] {
  const a = new Map(before.map((p) => [p.path, p]));
  const b = new Map(after.map((p) => [p.path, p]));
  const out: InputChange[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const was = a.get(path);
    const is = b.get(path);
    if (was?.objectId === is?.objectId) continue;
    out.push({
      input: `path ${path || '/'}`,
      before: was?.objectId ?? ABSENT,
      after: is?.objectId ?? ABSENT,
      path: { path, kind: is?.kind ?? was?.kind ?? 'dir' },
    });
  }
  return out;
}

function referenceChanges(
  label: string,
  before: readonly KeyedReference[],
  after: readonly KeyedReference[],
): InputChange[] {
  const a = new Map(before.map((r) => [r.ref, r.digest]));
  const b = new Map(after.map((r) => [r.ref, r.digest]));
  return [...new Set([...a.keys(), ...b.keys()])]
    .sort()
    .filter((ref) => a.get(ref) !== b.get(ref))
    .map((ref) => ({ input: `${label} ${ref}`, before: a.get(ref) ?? ABSENT, after: b.get(ref) ?? ABSENT }));
}

const differs = (input: string, before: string, after: string): InputChange[] =>
  before === after ? [] : [{ input, before, after }];

/** Every input of `after` that differs from `before`, in the order the log names them. */
export function inputChanges(before: BuildKeyInput, after: BuildKeyInput): InputChange[] {
  const ids = (input: BuildKeyInput): string => [...(input.secretIds ?? [])].sort().join(',') || 'none';
  const platforms = (input: BuildKeyInput): string => input.platforms.join(',') || 'default';
  const samePlatforms = [...before.platforms].sort().join(',') === [...after.platforms].sort().join(',');
  return [
    ...differs('config file', before.configDigest, after.configDigest),
    ...pathChanges(before.paths, after.paths),
    ...referenceChanges('base image', before.baseImages, after.baseImages),
    ...referenceChanges('feature', before.features, after.features),
    ...(samePlatforms ? [] : [{ input: 'platforms', before: platforms(before), after: platforms(after) }]),
    ...differs('Dev Containers CLI', before.cliVersion, after.cliVersion),
    ...(ids(before) !== ids(after)
      ? [{ input: 'build secret ids', before: ids(before), after: ids(after) }]
      : before.secretsIdentity !== after.secretsIdentity
        ? [{ input: 'build secrets' }]
        : []),
    ...differs('layer compression', before.compression ?? 'gzip', after.compression ?? 'gzip'),
    ...differs(
      'build process version',
      String(before.buildProcessVersion),
      String(after.buildProcessVersion),
    ),
  ];
}

/** Every input of `after` that differs from `before`, named for the build log. */
export const changedInputs = (before: BuildKeyInput, after: BuildKeyInput): string[] =>
  inputChanges(before, after).map(describeChange);
