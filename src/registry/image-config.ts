/**
 * GET /devcontainer's registry part: tag -> (index -> platform manifest) -> config blob.
 * Manifests by digest and config blobs are cached, so a repeated lookup costs one round trip.
 */
import { serviceError } from '../errors/errors.js';
import { type FetchedManifest, LIMITS, type RegistryCall, type RegistryClient } from './client.js';
import { type Platform, parseImageConfig, parseManifest } from './manifest.js';
import { formatPlatform, normalizePlatform, platformMatches, selectPlatform } from './platform.js';

export interface ImageConfigRead {
  /** Digest of the (platform) image manifest actually read. */
  digest: string;
  labels: Record<string, string>;
}

/**
 * Reads the image config of `wanted` in the tag. A single-platform image is checked against
 * `wanted` only when `strictPlatform` (the caller named a platform) and its config names one.
 */
export async function readImageConfig(
  client: RegistryClient,
  call: RegistryCall,
  wanted: Platform,
  strictPlatform: boolean,
): Promise<ImageConfigRead> {
  const top = await client.getManifest(call, call.ref.tag);
  if (!top) throw serviceError('IMAGE_NOT_FOUND', { image: call.ref.image });
  return readConfigOf(client, call, top, wanted, strictPlatform);
}

/** The same from the tag's manifest, already read (`top`). */
export async function readConfigOf(
  client: RegistryClient,
  call: RegistryCall,
  top: FetchedManifest,
  wanted: Platform,
  strictPlatform: boolean,
): Promise<ImageConfigRead> {
  const { ref } = call;
  let manifest = parseManifest(top.body, top.contentType);
  if (!manifest) throw serviceError('MANIFEST_INVALID', { registry: ref.registry, image: ref.image });
  let digest = top.digest;
  const isIndex = manifest.kind === 'index';
  if (manifest.kind === 'index') {
    const selection = selectPlatform(manifest.manifests, wanted);
    if (!selection.found)
      throw serviceError('PLATFORM_NOT_FOUND', {
        image: ref.image,
        platform: formatPlatform(wanted),
        available: selection.available,
      });
    digest = selection.descriptor.digest;
    const platformManifest = await client.getManifest(call, digest);
    if (!platformManifest)
      throw serviceError('PLATFORM_MANIFEST_MISSING', { registry: ref.registry, image: ref.image, digest });
    manifest = parseManifest(platformManifest.body, platformManifest.contentType);
    if (manifest?.kind !== 'image') {
      throw serviceError('PLATFORM_MANIFEST_UNSUPPORTED', {
        registry: ref.registry,
        digest,
        image: ref.image,
      });
    }
  }
  if (manifest.kind !== 'image')
    throw serviceError('MANIFEST_INVALID', { registry: ref.registry, image: ref.image });
  const config = parseImageConfig(await client.getBlob(call, manifest.config.digest, LIMITS.configBytes));
  if (!config) throw serviceError('IMAGE_CONFIG_INVALID', { registry: ref.registry, image: ref.image });
  if (!isIndex && strictPlatform && config.platform && !platformMatches(config.platform, wanted)) {
    throw serviceError('PLATFORM_NOT_FOUND', {
      image: ref.image,
      platform: formatPlatform(wanted),
      available: [formatPlatform(normalizePlatform(config.platform))],
    });
  }
  return { digest, labels: config.labels };
}
