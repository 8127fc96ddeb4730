/**
 * Reuse through the registry API (see docs/reuse.md): the key of a successful build is
 * recorded as the tag `build-key-<hex>` of the target repository, pointing at the built image
 * (the same manifest or index). A later build with that key finds it with one manifest request
 * and writes its own tag: a relabelled copy (src/registry/relabel.ts) with this request's
 * revision and source labels. Every call uses the push credentials of the build.
 */
import { serviceError } from '../../src/errors/errors.js';
import { LIMITS, PUSH_ACTIONS, type RegistryCall } from '../../src/registry/client.js';
import { type RegistryAccess, registryCall } from '../../src/registry/call.js';
import {
  parseImageConfig,
  parseManifest,
  type Descriptor,
  type Platform,
} from '../../src/registry/manifest.js';
import type { PushedImage } from '../../src/builds/types.js';
import { formatPlatform, isAttestation } from '../../src/registry/platform.js';
import { putManifest } from '../../src/registry/push.js';
import { manifestMediaType, writeRelabelled } from '../../src/registry/relabel.js';
import type { SupplyChain } from '../../src/supply-chain/supply-chain.js';
import { imageLabels, type ImageSource } from '../../src/rules/image-labels.js';
import { buildKeyTag } from './build-key.js';
import type { ImageTarget, TaggedImageTarget } from '../../src/rules/image-target.js';

/** The build's registry access, with what a reuse adds: the supply chain and the served mark. */
export interface ReuseAccess extends RegistryAccess {
  /** Attestations re-issued on a reuse, signatures of every image answered. */
  readonly supply: SupplyChain;
  /** Told the image a reuse was written from (retention counts it as served). */
  readonly reusedFrom?: (repository: ImageTarget, digest: string) => void;
}

const pushCall = (target: TaggedImageTarget, tag: string, access: ReuseAccess): RegistryCall =>
  registryCall(access, target.withTag(tag), PUSH_ACTIONS);

export type ReuseOutcome =
  | {
      readonly kind: 'reused';
      readonly earlier: string;
      readonly digest: string;
      /** Lines for the log: attestations re-issued, signature. */
      readonly notes: readonly string[];
    }
  | { readonly kind: 'absent' };

/**
 * Looks the key up in the target repository; when recorded, writes `target.tag` as a relabelled
 * copy (its attestations re-issued), signs it, and returns the earlier image
 * (`<registry>/<name>@<digest>`) and the new digest. Registry failures throw (the caller builds).
 */
export async function reuseByKey(
  key: string,
  target: TaggedImageTarget,
  origin: ImageSource,
  access: ReuseAccess,
): Promise<ReuseOutcome> {
  const keyCall = pushCall(target, buildKeyTag(key), access);
  const recorded = await access.client.getManifest(keyCall, keyCall.ref.tag);
  if (recorded === undefined) return { kind: 'absent' };
  const call = pushCall(target, target.tag, access);
  const earlier = target.atDigest(recorded.digest);
  const notes: string[] = [];
  const attest = access.supply.reissue(
    access.client,
    call,
    {
      repository: origin.repository,
      ref: origin.branch,
      commit: origin.commit,
      buildKey: key,
      sourceImage: earlier,
      sourceDigest: recorded.digest,
    },
    notes,
  );
  access.reusedFrom?.(target, recorded.digest);
  const labels = imageLabels({ ...origin, built: new Date().toISOString(), key });
  // The signature is written beside the final PUT: its digest is known before the registry has it.
  const beside = async (digest: string): Promise<void> => {
    const signed = await access.supply.sign(access.client, call, digest);
    if (signed !== undefined) notes.push(signed);
  };
  const digest = await writeRelabelled(access.client, call, recorded, labels, {
    ...(attest === undefined ? {} : { attest }),
    beside,
  });
  return { kind: 'reused', earlier, digest, notes };
}

/** Signs `digest` of `target` when a key is configured: the log line, or undefined. */
export async function signAnswered(
  target: TaggedImageTarget,
  digest: string,
  access: ReuseAccess,
): Promise<string | undefined> {
  return access.supply.sign(access.client, pushCall(target, target.tag, access), digest);
}

/** The digest the registry serves for `target.tag` (the image just pushed or written). */
export async function pushedDigest(target: TaggedImageTarget, access: ReuseAccess): Promise<string> {
  const call = pushCall(target, target.tag, access);
  const manifest = await access.client.getManifest(call, target.tag);
  if (manifest === undefined) throw serviceError('IMAGE_NOT_FOUND', { image: call.ref.image });
  return manifest.digest;
}

/** What the registry serves as `digest` of the target: each platform's compressed layer bytes. */
export async function pushedImage(
  target: TaggedImageTarget,
  access: ReuseAccess,
  digest: string,
): Promise<PushedImage> {
  const call = pushCall(target, target.tag, access);
  const read = async (reference: string) => {
    const fetched = await access.client.getManifest(call, reference);
    const manifest = fetched && parseManifest(fetched.body, fetched.contentType);
    if (manifest === undefined)
      throw serviceError('IMAGE_NOT_FOUND', { image: `${call.ref.image}@${reference}` });
    return manifest;
  };
  const bytes = (layers: readonly Descriptor[]): number =>
    layers.reduce((sum, layer) => sum + (layer.size ?? 0), 0);
  const top = await read(digest);
  if (top.kind === 'image') {
    const config = parseImageConfig(await access.client.getBlob(call, top.config.digest, LIMITS.configBytes));
    const platform = config?.platform === undefined ? 'unknown' : formatPlatform(config.platform);
    return { digest, platforms: [{ platform, digest, compressedBytes: bytes(top.layers) }] };
  }
  // Attestation manifests are not images of a platform.
  const images = top.manifests.filter((entry) => entry.platform !== undefined && !isAttestation(entry));
  const platforms = await Promise.all(
    images.map(async (entry) => {
      const manifest = await read(entry.digest);
      const layers = manifest.kind === 'image' ? manifest.layers : [];
      const platform = formatPlatform(entry.platform as Platform);
      return { platform, digest: entry.digest, compressedBytes: bytes(layers) };
    }),
  );
  return { digest, platforms };
}

/** The digest the registry serves for `target.tag` (one HEAD), or undefined when it has none. */
export async function servedDigest(
  target: TaggedImageTarget,
  access: ReuseAccess,
): Promise<string | undefined> {
  const call = pushCall(target, target.tag, access);
  const head = await access.client.headManifest(call, target.tag);
  if (head.status === 404) return undefined;
  if (head.status !== 200 || head.digest === undefined)
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: call.ref.registry,
      reason: `manifest HEAD answered ${head.status}`,
      image: call.ref.image,
    });
  return head.digest;
}

/** Records `key` for the image just pushed under `target.tag` (the same manifest under the key's tag). */
export async function recordKey(
  key: string,
  target: TaggedImageTarget,
  access: ReuseAccess,
): Promise<string> {
  const built = pushCall(target, target.tag, access);
  const manifest = await access.client.getManifest(built, target.tag);
  if (manifest === undefined) throw serviceError('IMAGE_NOT_FOUND', { image: built.ref.image });
  const keyCall = pushCall(target, buildKeyTag(key), access);
  await putManifest(access.client, keyCall, keyCall.ref.tag, manifest.body, manifestMediaType(manifest));
  return keyCall.ref.image;
}
