/**
 * A new image under a new tag from an existing one, with some config labels replaced, through
 * the registry API only: for each platform manifest a new image config (the labels set, every
 * other field unchanged), uploaded as a blob, a new manifest with the same layers, and, for a
 * multi-platform image, a new index. Attestation manifests (they name the old manifests'
 * digests) are left out of the new index. The layers are not copied: the registry refuses the
 * manifest when one of them is gone, and the caller sees REGISTRY_FAILED.
 */
import { registryUnreachable } from '../errors.js';
import { LIMITS, type FetchedManifest, type RegistryCall, type RegistryClient, sha256 } from './client.js';
import { MEDIA_TYPES } from './manifest.js';
import { putManifest, uploadBlob } from './push.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseObject(body: Buffer, what: string, call: RegistryCall): Json {
  try {
    const json: unknown = JSON.parse(body.toString('utf8'));
    if (isObject(json)) return json;
  } catch {
    // reported below
  }
  throw registryUnreachable(call.ref.registry, `${what} is not a JSON object`, call.ref.image);
}

/** The image config with `labels` set in `config.Labels` (pure). */
export function relabelConfig(config: Json, labels: Readonly<Record<string, string>>): Json {
  const inner = isObject(config.config) ? config.config : {};
  const current = isObject(inner.Labels) ? inner.Labels : {};
  return { ...config, config: { ...inner, Labels: { ...current, ...labels } } };
}

/** An index entry that is an attestation (BuildKit's provenance/SBOM manifests). */
export function isAttestation(descriptor: Json): boolean {
  const annotations = isObject(descriptor.annotations) ? descriptor.annotations : {};
  const platform = isObject(descriptor.platform) ? descriptor.platform : {};
  return annotations['vnd.docker.reference.type'] === 'attestation-manifest' || platform.os === 'unknown';
}

const mediaTypeOf = (json: Json, contentType: string | undefined): string =>
  typeof json.mediaType === 'string' ? json.mediaType : (contentType?.split(';')[0]?.trim() ?? '');

const isIndexType = (type: string, json: Json): boolean =>
  type === MEDIA_TYPES.ociIndex ||
  type === MEDIA_TYPES.dockerList ||
  (!type && Array.isArray(json.manifests));

/** The media type of a fetched manifest: its `mediaType` field, else the response's Content-Type. */
export function manifestMediaType(manifest: FetchedManifest): string {
  let json: unknown;
  try {
    json = JSON.parse(manifest.body.toString('utf8'));
  } catch {
    json = {};
  }
  const type = mediaTypeOf(isObject(json) ? json : {}, manifest.contentType);
  return type || MEDIA_TYPES.ociManifest;
}

/** One platform manifest relabelled: config blob uploaded, manifest PUT by digest when `tag` is undefined. */
async function relabelImage(
  client: RegistryClient,
  call: RegistryCall,
  manifest: Json,
  mediaType: string,
  labels: Readonly<Record<string, string>>,
  tag: string | undefined,
): Promise<{ digest: string; size: number; mediaType: string }> {
  const config = isObject(manifest.config) ? manifest.config : undefined;
  if (config === undefined || typeof config.digest !== 'string') {
    throw registryUnreachable(call.ref.registry, 'manifest without a config', call.ref.image);
  }
  const configBody = await client.getBlob(call, config.digest, LIMITS.configBytes);
  const relabelled = Buffer.from(
    JSON.stringify(relabelConfig(parseObject(configBody, 'image config', call), labels)),
  );
  const configType =
    typeof config.mediaType === 'string' ? config.mediaType : 'application/vnd.oci.image.config.v1+json';
  // The config carries this request's revision: new unless the same commit is written again.
  const configDigest = await uploadBlob(client, call, relabelled, configType, { probe: false });
  const body = Buffer.from(
    JSON.stringify({ ...manifest, config: { ...config, digest: configDigest, size: relabelled.length } }),
  );
  const digest = await putManifest(client, call, tag ?? sha256(body), body, mediaType);
  return { digest, size: body.length, mediaType };
}

/**
 * Writes `source` (an image or index of the call's repository) relabelled under `call.ref.tag`;
 * returns the new top-level digest.
 */
export async function writeRelabelled(
  client: RegistryClient,
  call: RegistryCall,
  source: FetchedManifest,
  labels: Readonly<Record<string, string>>,
): Promise<string> {
  const top = parseObject(source.body, 'manifest', call);
  const type = mediaTypeOf(top, source.contentType);
  if (!isIndexType(type, top)) {
    return (await relabelImage(client, call, top, type || MEDIA_TYPES.ociManifest, labels, call.ref.tag))
      .digest;
  }
  const entries = Array.isArray(top.manifests) ? top.manifests.filter(isObject) : [];
  // Every platform at once (their order in the index kept).
  const manifests: Json[] = await Promise.all(
    entries
      .filter((entry) => !isAttestation(entry) && typeof entry.digest === 'string')
      .map(async (entry) => {
        const digest = String(entry.digest);
        const child = await client.getManifest(call, digest);
        if (child === undefined) {
          throw registryUnreachable(call.ref.registry, `platform manifest ${digest} is gone`, call.ref.image);
        }
        const childJson = parseObject(child.body, 'platform manifest', call);
        const childType =
          mediaTypeOf(childJson, child.contentType) ||
          (typeof entry.mediaType === 'string' ? entry.mediaType : MEDIA_TYPES.ociManifest);
        const written = await relabelImage(client, call, childJson, childType, labels, undefined);
        return { ...entry, digest: written.digest, size: written.size };
      }),
  );
  if (manifests.length === 0) {
    throw registryUnreachable(call.ref.registry, 'index without a platform manifest', call.ref.image);
  }
  const body = Buffer.from(JSON.stringify({ ...top, manifests }));
  return putManifest(client, call, call.ref.tag, body, type || MEDIA_TYPES.ociIndex);
}
