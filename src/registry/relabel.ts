/**
 * A new image under a new tag from an existing one, with some config labels replaced, through
 * the registry API only: per platform a new config blob and manifest with the same layers, and
 * for an index a new index. The source's attestation manifests name the old manifests, so they
 * are left out; an `attest` hook may add new ones for the new manifests (src/supply-chain/).
 * Layers are not copied: a gone layer makes the registry refuse the manifest (REGISTRY_FAILED).
 */
import { serviceError } from '../errors/errors.js';
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
  throw serviceError('REGISTRY_UNREACHABLE', {
    registry: call.ref.registry,
    reason: `${what} is not a JSON object`,
    image: call.ref.image,
  });
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

/** A platform of the source: its manifest's digest, and the source index's entries (none for a single manifest). */
interface SourcePlatform {
  readonly sourceDigest: string;
  readonly sourceEntries: readonly Json[];
}

/** A platform manifest written for a source one. */
export interface RelabelledPlatform extends SourcePlatform {
  readonly digest: string;
  /** `os/arch[/variant]`, from the image config. */
  readonly platform: string;
}

/**
 * Index entries to add for a platform written (attestations of the new manifest). Called as soon
 * as the source platform is known, so it can read the source's attestations while the new
 * manifest is prepared; `written` resolves once the new digest is known, before its PUT ends.
 */
export type AttestHook = (source: SourcePlatform, written: Promise<RelabelledPlatform>) => Promise<Json[]>;

/** Run beside the PUT of the top-level manifest, with its digest (computed before the PUT). */
type BesideTop = (digest: string) => Promise<void>;

const platformOf = (config: Json): string =>
  [config.os, config.architecture, config.variant].filter((p) => typeof p === 'string' && p).join('/');

/** A relabelled platform manifest, computed but not yet written. */
interface PreparedImage {
  readonly config: Buffer;
  readonly configType: string;
  readonly body: Buffer;
  readonly digest: string;
  readonly mediaType: string;
  readonly platform: string;
}

/** Reads the source config and computes the relabelled config and manifest (nothing written). */
async function prepareImage(
  client: RegistryClient,
  call: RegistryCall,
  manifest: Json,
  mediaType: string,
  labels: Readonly<Record<string, string>>,
): Promise<PreparedImage> {
  const config = isObject(manifest.config) ? manifest.config : undefined;
  if (config === undefined || typeof config.digest !== 'string') {
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: call.ref.registry,
      reason: 'manifest without a config',
      image: call.ref.image,
    });
  }
  const configBody = await client.getBlob(call, config.digest, LIMITS.configBytes);
  const sourceConfig = parseObject(configBody, 'image config', call);
  const relabelled = Buffer.from(JSON.stringify(relabelConfig(sourceConfig, labels)));
  const configType =
    typeof config.mediaType === 'string' ? config.mediaType : 'application/vnd.oci.image.config.v1+json';
  const body = Buffer.from(
    JSON.stringify({
      ...manifest,
      config: { ...config, digest: sha256(relabelled), size: relabelled.length },
    }),
  );
  return {
    config: relabelled,
    configType,
    body,
    digest: sha256(body),
    mediaType,
    platform: platformOf(sourceConfig),
  };
}

/** Writes a prepared image: its config blob, then the manifest under `reference`. */
async function writeImage(
  client: RegistryClient,
  call: RegistryCall,
  image: PreparedImage,
  reference: string,
): Promise<void> {
  // The config carries this request's revision: new unless the same commit is written again.
  await uploadBlob(client, call, image.config, image.configType, { probe: false });
  await putManifest(client, call, reference, image.body, image.mediaType);
}

/** One platform written by digest, its attestations (if any) prepared and written beside it. */
async function writeAttested(
  client: RegistryClient,
  call: RegistryCall,
  manifest: Json,
  mediaType: string,
  labels: Readonly<Record<string, string>>,
  source: SourcePlatform,
  attest: AttestHook | undefined,
): Promise<{ image: PreparedImage; extra: Json[] }> {
  const preparing = prepareImage(client, call, manifest, mediaType, labels);
  const [image, extra] = await Promise.all([
    preparing.then(async (image) => {
      await writeImage(client, call, image, image.digest);
      return image;
    }),
    attest === undefined
      ? []
      : attest(
          source,
          preparing.then((image) => ({ ...source, digest: image.digest, platform: image.platform })),
        ),
  ]);
  return { image, extra };
}

/** PUTs the top-level manifest under the tag, with `beside` run at the same time. */
async function writeTop(
  client: RegistryClient,
  call: RegistryCall,
  body: Buffer,
  mediaType: string,
  beside: BesideTop | undefined,
): Promise<string> {
  const [digest] = await Promise.all([
    putManifest(client, call, call.ref.tag, body, mediaType),
    beside?.(sha256(body)),
  ]);
  return digest;
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
  hooks: RelabelHooks,
): Promise<string> {
  const mediaType = type || MEDIA_TYPES.ociManifest;
  if (hooks.attest === undefined) {
    const image = await prepareImage(client, call, top, mediaType, labels);
    await uploadBlob(client, call, image.config, image.configType, { probe: false });
    return writeTop(client, call, image.body, mediaType, hooks.beside);
  }
  const platform = { sourceDigest: source.digest, sourceEntries: [] };
  const { image, extra } = await writeAttested(client, call, top, mediaType, labels, platform, hooks.attest);
  const [os = '', architecture = '', variant] = image.platform.split('/');
  const entry = {
    mediaType,
    digest: image.digest,
    size: image.body.length,
    platform: { os, architecture, ...(variant === undefined ? {} : { variant }) },
  };
  const body = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests: [entry, ...extra] }),
  );
  return writeTop(client, call, body, MEDIA_TYPES.ociIndex, hooks.beside);
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
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: call.ref.registry,
      reason: `platform manifest ${digest} is gone`,
      image: call.ref.image,
    });
  }
  const childJson = parseObject(child.body, 'platform manifest', call);
  const childType =
    mediaTypeOf(childJson, child.contentType) ||
    (typeof entry.mediaType === 'string' ? entry.mediaType : MEDIA_TYPES.ociManifest);
  const source = { sourceDigest: digest, sourceEntries: entries };
  const { image, extra } = await writeAttested(client, call, childJson, childType, labels, source, attest);
  return [{ ...entry, digest: image.digest, size: image.body.length }, ...extra];
}

/** What a relabel adds: attestations per platform, and work beside the final PUT (a signature). */
export interface RelabelHooks {
  readonly attest?: AttestHook;
  readonly beside?: BesideTop;
}

/**
 * Writes `source` (an image or index of the call's repository) relabelled under `call.ref.tag`,
 * with the attestations `hooks.attest` gives for each platform written, and `hooks.beside` run
 * with the final digest during the last PUT; returns the new top-level digest.
 */
export async function writeRelabelled(
  client: RegistryClient,
  call: RegistryCall,
  source: FetchedManifest,
  labels: Readonly<Record<string, string>>,
  hooks: RelabelHooks = {},
): Promise<string> {
  const top = parseObject(source.body, 'manifest', call);
  const type = mediaTypeOf(top, source.contentType);
  if (!isIndexType(type, top)) return writeSingle(client, call, source, top, type, labels, hooks);
  const entries = Array.isArray(top.manifests) ? top.manifests.filter(isObject) : [];
  const platforms = entries.filter((entry) => !isAttestation(entry) && typeof entry.digest === 'string');
  if (platforms.length === 0) {
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: call.ref.registry,
      reason: 'index without a platform manifest',
      image: call.ref.image,
    });
  }
  // Every platform at once; the new entries in the source's order, each followed by its attestations.
  const written = await Promise.all(
    platforms.map((entry) => writePlatform(client, call, entry, entries, labels, hooks.attest)),
  );
  const manifests = [...written.flatMap((group) => group.slice(0, 1)), ...written.flatMap((g) => g.slice(1))];
  const body = Buffer.from(JSON.stringify({ ...top, manifests }));
  return writeTop(client, call, body, type || MEDIA_TYPES.ociIndex, hooks.beside);
}
