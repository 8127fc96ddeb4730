/**
 * Gathers the build key's input record (build-key.ts): the config's digest, the read set's object
 * ids, the digests of base images and OCI features through the service's registry client with the
 * build's credentials. What cannot be pinned (docs/reuse.md lists it) makes the build unkeyable: it
 * builds, and the reason goes to the img log. The ids and the Dockerfile's text come from the
 * caller: a checked-out clone (checkout-key.ts) or the commit's trees (tree-key.ts).
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { publicReasonOf } from '../../src/errors/errors.js';
import { PULL } from '../../src/registry/client.js';
import { type RegistryAccess, registryCall } from '../../src/registry/call.js';
import { parseImageString } from '../../src/registry/image-string.js';
import {
  buildReadSet,
  dockerfileOf,
  isLocalFeature,
  type ReadPath,
  repositoryPath,
} from '../builder/read-set.js';
import {
  BUILD_PROCESS_VERSION,
  buildKey,
  type BuildKeyInput,
  type KeyedPath,
  type KeyedReference,
} from './build-key.js';
import { dockerfileImages } from './dockerfile-from.js';

/** What the key is computed from: the definition as found, and readers of the commit. */
export interface KeySource {
  /** Repository-relative path of the config; undefined for the generated fallback. */
  readonly configPath: string | undefined;
  /** The config file's bytes (the generated fallback's, when there is none). */
  readonly configBytes: Buffer;
  /** The parsed definition; undefined when it could not be parsed. */
  readonly definition: unknown;
  /** The git object ids of the read set's paths at the commit. */
  readonly objectIds: (readSet: readonly ReadPath[]) => Promise<KeyedPath[]>;
  /** The text of the file at a repository path (the Dockerfile); undefined when it cannot be read. */
  readonly readText: (path: string) => Promise<string | undefined>;
}

export interface KeyDeps {
  /** The build's registry access (its credentials read base images and features). */
  readonly access: RegistryAccess;
  readonly platforms: readonly string[];
  readonly cliVersion: string;
  /** The ids of the build secrets offered. */
  readonly secretIds: readonly string[];
  /** The keyed identity of their ids and values (never a value); absent: none offered. */
  readonly secretsIdentity?: string;
  /** The layer compression of the build (gzip: absent from the key). */
  readonly compression?: string;
}

export type KeyOutcome =
  | { readonly kind: 'keyed'; readonly key: string; readonly input: BuildKeyInput }
  | { readonly kind: 'unkeyable'; readonly reason: string };

class Unkeyable extends Error {}

const objectOf = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const sha256 = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** The digest of one image or feature reference (pinned digest as is; a tag through a manifest HEAD). */
export async function resolve(ref: string, what: string, deps: KeyDeps): Promise<KeyedReference> {
  const parsed = parseImageString(ref, deps.access.insecureRegistries);
  if (parsed === undefined) {
    throw new Unkeyable(`${what} ${JSON.stringify(ref.slice(0, 200))} is not an image reference`);
  }
  if (parsed.digest !== undefined) return { ref, digest: parsed.digest };
  try {
    const call = registryCall(deps.access, parsed.ref.target, PULL);
    const head = await deps.access.client.headManifest(call, parsed.ref.tag);
    if (head.status !== 200 || head.digest === undefined) {
      throw new Unkeyable(`${what} ${ref}: the registry answered ${head.status} without a digest`);
    }
    return { ref, digest: head.digest };
  } catch (err) {
    if (err instanceof Unkeyable) throw err;
    const why = publicReasonOf(err, 'registry call failed');
    throw new Unkeyable(`${what} ${ref}: ${why}`);
  }
}

async function baseImageRefs(source: KeySource, def: Record<string, unknown>): Promise<string[]> {
  if (def.dockerComposeFile !== undefined) throw new Unkeyable('docker compose definitions are not keyed');
  const refs: string[] = [];
  if (typeof def.image === 'string') refs.push(def.image);
  const dockerfile = dockerfileOf(def);
  if (dockerfile !== undefined) {
    const configDir = source.configPath === undefined ? '' : posix.dirname(source.configPath);
    const path = repositoryPath(configDir === '.' ? '' : configDir, dockerfile);
    if (path === undefined) throw new Unkeyable(`Dockerfile ${dockerfile} is outside the repository`);
    const text = await source.readText(path);
    if (text === undefined) throw new Unkeyable(`Dockerfile ${path} could not be read`);
    const images = dockerfileImages(text);
    if (images.kind === 'unkeyable') throw new Unkeyable(`Dockerfile ${path}: ${images.reason}`);
    refs.push(...images.refs);
  }
  if (refs.length === 0) throw new Unkeyable('the definition names no image and no Dockerfile');
  return refs;
}

function featureRefs(def: Record<string, unknown>): string[] {
  const refs: string[] = [];
  for (const id of Object.keys(objectOf(def.features))) {
    if (isLocalFeature(id)) continue; // its folder is in the read set
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(id)) throw new Unkeyable(`feature ${id.slice(0, 200)} is a URL`);
    if (!id.includes('/')) throw new Unkeyable(`feature ${id.slice(0, 200)} is a legacy short id`);
    refs.push(id);
  }
  return refs;
}

export async function computeKeyInput(source: KeySource, deps: KeyDeps): Promise<KeyOutcome> {
  try {
    if (source.definition === undefined) throw new Unkeyable('the definition could not be parsed');
    const def = objectOf(source.definition);
    const features = featureRefs(def);
    // The object ids and every reference's digest at once (git and the registries in parallel).
    const [paths, baseImages, featureDigests] = await Promise.all([
      source.objectIds(buildReadSet(source.configPath, source.definition)),
      baseImageRefs(source, def).then((images) =>
        Promise.all(images.map((r) => resolve(r, 'base image', deps))),
      ),
      Promise.all(features.map((r) => resolve(r, 'feature', deps))),
    ]);
    const input: BuildKeyInput = {
      configDigest: sha256(source.configBytes),
      paths,
      baseImages,
      features: featureDigests,
      platforms: [...deps.platforms],
      cliVersion: deps.cliVersion,
      buildProcessVersion: BUILD_PROCESS_VERSION,
      ...(deps.secretIds.length > 0 ? { secretIds: [...deps.secretIds] } : {}),
      ...(deps.secretsIdentity === undefined ? {} : { secretsIdentity: deps.secretsIdentity }),
      ...(deps.compression === undefined || deps.compression === 'gzip'
        ? {}
        : { compression: deps.compression }),
    };
    return { kind: 'keyed', key: buildKey(input), input };
  } catch (err) {
    if (err instanceof Unkeyable) return { kind: 'unkeyable', reason: err.message };
    throw err;
  }
}
