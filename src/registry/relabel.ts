/**
 * A new image under a new tag from an existing one, with some config labels replaced, through
 * the registry API only: per platform a new config blob and manifest with the same layers, and
 * for an index a new index. The source's attestation manifests name the old manifests, so they
 * are left out; an `attest` hook may add new ones for the new manifests (src/supply-chain/).
 * Layers are not copied: a gone layer makes the registry refuse the manifest (REGISTRY_FAILED).
 */
import { registryUnreachable } from '../errors/errors.js';
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

/** A platform manifest written for a source one. */
export interface RelabelledPlatform {
  /** The source manifest's digest, and the source index's entries (none for a single manifest). */
  readonly sourceDigest: string;
  readonly sourceEntries: readonly Json[];
  readonly digest: string;
  /** `os/arch[/variant]`, from the image config. */
  readonly platform: string;
}

/** Index entries to add for a platform written (attestations of the new manifest). */
export type AttestHook = (written: RelabelledPlatform) => Promise<Json[]>;

const platformOf = (config: Json): string =>
  [config.os, config.architecture, config.variant].filter((p) => typeof p === 'string' && p).join('/');

/** One platform manifest relabelled: config blob uploaded, manifest PUT by digest when `tag` is undefined. */
async function relabelImage(
  client: RegistryClient,
  call: RegistryCall,
  manifest: Json,
  mediaType: string,
  labels: Readonly<Record<string, string>>,
  tag: string | undefined,
): Promise<{ digest: string; size: number; mediaType: string; platform: string }> {
  const config = isObject(manifest.config) ? manifest.config : undefined;
  if (config === undefined || typeof config.digest !== 'string') {
    throw registryUnreachable(call.ref.registry, 'manifest without a config', call.ref.image);
  }
  const configBody = await client.getBlob(call, config.digest, LIMITS.configBytes);
  const sourceConfig = parseObject(configBody, 'image config', call);
  const relabelled = Buffer.from(JSON.stringify(relabelConfig(sourceConfig, labels)));
  const configType =
    typeof config.mediaType === 'string' ? config.mediaType : 'application/vnd.oci.image.config.v1+json';
  // The config carries this request's revision: new unless the same commit is written again.
  const configDigest = await uploadBlob(client, call, relabelled, configType, { probe: false });
  const body = Buffer.from(
    JSON.stringify({ ...manifest, config: { ...config, digest: configDigest, size: relabelled.length } }),
  );
  const digest = await putManifest(client, call, tag ?? sha256(body), body, mediaType);
  return { digest, size: body.length, mediaType, platform: platformOf(sourceConfig) };
}

/**
 * A single-manifest source: the manifest under the tag, or with attestations to add, the manifest
 * by digest and an index of it and its attestations under the tag.
 */
async function writeSingle(
  client: RegistryClient,
  call: RegistryCall,
  source: FetchedManifest,
  top: Json,
  type: string,
  labels: Readonly<Record<string, string>>,
  attest: AttestHook | undefined,
): Promise<string> {
  const mediaType = type || MEDIA_TYPES.ociManifest;
  if (attest === undefined)
    return (await relabelImage(client, call, top, mediaType, labels, call.ref.tag)).digest;
  const written = await relabelImage(client, call, top, mediaType, labels, undefined);
  const [os = '', architecture = '', variant] = written.platform.split('/');
  const entry = {
    mediaType,
    digest: written.digest,
    size: written.size,
    platform: { os, architecture, ...(variant === undefined ? {} : { variant }) },
  };
  const extra = await attest({ ...written, sourceDigest: source.digest, sourceEntries: [] });
  const body = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests: [entry, ...extra] }),
  );
  return putManifest(client, call, call.ref.tag, body, MEDIA_TYPES.ociIndex);
}

/** One platform entry of a source index relabelled: its new entry, then any attestation entries. */
async function writePlatform(
  client: RegistryClient,
  call: RegistryCall,
  entry: Json,
  entries: readonly Json[],
  labels: Readonly<Record<string, string>>,
  attest: AttestHook | undefined,
): Promise<Json[]> {
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
  const extra =
    attest === undefined ? [] : await attest({ ...written, sourceDigest: digest, sourceEntries: entries });
  return [{ ...entry, digest: written.digest, size: written.size }, ...extra];
}

/**
 * Writes `source` (an image or index of the call's repository) relabelled under `call.ref.tag`,
 * with the attestations `attest` gives for each platform written; returns the new top-level digest.
 */
export async function writeRelabelled(
  client: RegistryClient,
  call: RegistryCall,
  source: FetchedManifest,
  labels: Readonly<Record<string, string>>,
  attest?: AttestHook,
): Promise<string> {
  const top = parseObject(source.body, 'manifest', call);
  const type = mediaTypeOf(top, source.contentType);
  if (!isIndexType(type, top)) return writeSingle(client, call, source, top, type, labels, attest);
  const entries = Array.isArray(top.manifests) ? top.manifests.filter(isObject) : [];
  const platforms = entries.filter((entry) => !isAttestation(entry) && typeof entry.digest === 'string');
  if (platforms.length === 0) {
    throw registryUnreachable(call.ref.registry, 'index without a platform manifest', call.ref.image);
  }
  // Every platform at once; the new entries in the source's order, each followed by its attestations.
  const written = await Promise.all(
    platforms.map((entry) => writePlatform(client, call, entry, entries, labels, attest)),
  );
  const manifests = [...written.flatMap((group) => group.slice(0, 1)), ...written.flatMap((g) => g.slice(1))];
  const body = Buffer.from(JSON.stringify({ ...top, manifests }));
  return putManifest(client, call, call.ref.tag, body, type || MEDIA_TYPES.ociIndex);
}
