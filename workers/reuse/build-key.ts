/**
 * The build key (pure): a digest of everything that determines a build's image and nothing else,
 * its inputs one explicit record so that two builds compare input by input (the inputs:
 * docs/reuse.md, The build key; secrets by id and keyed identity: docs/secrets.md). The key is the sha256
 * of the record's canonical JSON, prefixed by KEY_FORMAT: changing the record's shape changes every
 * key.
 */
import { createHash } from 'node:crypto';

/** Bumped whenever the way the service builds images changes (args, wrapper, labels...). */
export const BUILD_PROCESS_VERSION = 1;
/** The version of the key record's layout. */
const KEY_FORMAT = 'ibs-build-key-v1';

export interface KeyedPath {
  readonly path: string;
  readonly kind: 'dir' | 'file';
  /** The git object id at HEAD, or `missing` when the commit has nothing at that path. */
  readonly objectId: string;
}

export interface KeyedReference {
  /** The reference as the definition names it. */
  readonly ref: string;
  /** `sha256:...` */
  readonly digest: string;
}

export interface BuildKeyInput {
  /** `sha256:...` of the config file's bytes. */
  readonly configDigest: string;
  readonly paths: readonly KeyedPath[];
  readonly baseImages: readonly KeyedReference[];
  readonly features: readonly KeyedReference[];
  readonly platforms: readonly string[];
  readonly cliVersion: string;
  readonly buildProcessVersion: number;
  /** The ids of the build secrets offered (absent or empty: none). */
  readonly secretIds?: readonly string[];
  /** The keyed identity of the build secrets offered, ids and values (docs/secrets.md); absent: none. */
  readonly secretsIdentity?: string;
  /** The layer compression when not gzip (absent: gzip, so that gzip keys stay as they were). */
  readonly compression?: string;
}

const byRef = (a: KeyedReference, b: KeyedReference): number => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0);

/** The record in its one canonical form (sorted lists, fixed field order). */
function canonical(input: BuildKeyInput): string {
  return JSON.stringify([
    KEY_FORMAT,
    input.configDigest,
    [...input.paths]
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((p) => [p.path, p.kind, p.objectId]),
    [...input.baseImages].sort(byRef).map((r) => [r.ref, r.digest]),
    [...input.features].sort(byRef).map((r) => [r.ref, r.digest]),
    [...input.platforms].sort(),
    input.cliVersion,
    input.buildProcessVersion,
    ...(input.secretIds !== undefined && input.secretIds.length > 0 ? [[...input.secretIds].sort()] : []),
    ...(input.secretsIdentity === undefined ? [] : [input.secretsIdentity]),
    ...(input.compression === undefined ? [] : [['compression', input.compression]]),
  ]);
}

/** The key: 64 hex digits. */
export function buildKey(input: BuildKeyInput): string {
  return createHash('sha256').update(canonical(input)).digest('hex');
}

/** The tag that records a key in the target repository. */
export const buildKeyTag = (key: string): string => `build-key-${key}`;
