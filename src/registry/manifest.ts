/**
 * Manifest media types and a checked view of the manifest JSON the service reads. Pure.
 */
import { isValidDigest } from './reference.js';

export const MEDIA_TYPES = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

/** The one Accept header of every manifest request. */
export const MANIFEST_ACCEPT = [
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerList,
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.dockerManifest,
].join(', ');

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: Platform;
  annotations?: Record<string, string>;
}

export type Manifest =
  { kind: 'index'; manifests: Descriptor[] } | { kind: 'image'; config: Descriptor; layers: Descriptor[] };

/** The body as a JSON object, or undefined when it is not valid JSON or not an object. */
function jsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const json: unknown = JSON.parse(body.toString('utf8'));
    return isObject(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function descriptor(value: unknown): Descriptor | undefined {
  if (!isObject(value) || typeof value.digest !== 'string' || !isValidDigest(value.digest)) return undefined;
  const out: Descriptor = { digest: value.digest };
  if (typeof value.mediaType === 'string') out.mediaType = value.mediaType;
  if (typeof value.size === 'number') out.size = value.size;
  if (
    isObject(value.platform) &&
    typeof value.platform.os === 'string' &&
    typeof value.platform.architecture === 'string'
  ) {
    out.platform = { os: value.platform.os, architecture: value.platform.architecture };
    if (typeof value.platform.variant === 'string' && value.platform.variant)
      out.platform.variant = value.platform.variant;
  }
  if (isObject(value.annotations)) {
    out.annotations = Object.fromEntries(
      Object.entries(value.annotations).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  }
  return out;
}

/**
 * Reads a manifest body. The kind comes from the body's mediaType, else the response's
 * Content-Type, else the shape. Undefined when it is neither an index nor an image manifest.
 */
export function parseManifest(body: Buffer, contentType: string | undefined): Manifest | undefined {
  const json = jsonObject(body);
  if (json === undefined) return undefined;
  const type =
    (typeof json.mediaType === 'string' ? json.mediaType : undefined) ??
    contentType?.split(';')[0]?.trim() ??
    '';
  const isIndex =
    type === MEDIA_TYPES.ociIndex ||
    type === MEDIA_TYPES.dockerList ||
    (!type && Array.isArray(json.manifests));
  if (isIndex) {
    if (!Array.isArray(json.manifests)) return undefined;
    const manifests = json.manifests.map(descriptor).filter((d): d is Descriptor => d !== undefined);
    return { kind: 'index', manifests };
  }
  const isImage =
    type === MEDIA_TYPES.ociManifest ||
    type === MEDIA_TYPES.dockerManifest ||
    (!type && isObject(json.config));
  if (!isImage) return undefined;
  const config = descriptor(json.config);
  if (!config) return undefined;
  const layers = Array.isArray(json.layers)
    ? json.layers.map(descriptor).filter((d): d is Descriptor => d !== undefined)
    : [];
  return { kind: 'image', config, layers };
}

/** The image config's platform and labels (`config.Labels`). */
export interface ImageConfig {
  platform?: Platform;
  labels: Record<string, string>;
}

export function parseImageConfig(body: Buffer): ImageConfig | undefined {
  const json = jsonObject(body);
  if (json === undefined) return undefined;
  const labelsRaw = isObject(json.config) && isObject(json.config.Labels) ? json.config.Labels : {};
  const labels = Object.fromEntries(
    Object.entries(labelsRaw).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  const out: ImageConfig = { labels };
  if (typeof json.os === 'string' && typeof json.architecture === 'string') {
    out.platform = { os: json.os, architecture: json.architecture };
    if (typeof json.variant === 'string' && json.variant) out.platform.variant = json.variant;
  }
  return out;
}
