/**
 * A whole image reference as a definition writes it (`[registry/]name[:tag][@digest]`), split
 * the way docker normalises it (no registry part: Docker Hub; a one-segment Docker Hub name:
 * `library/`) and checked by the one reference grammar (reference.ts). Pure. Throws
 * undefined for what the grammar refuses (the caller decides what that means).
 */
import { isServiceError } from '../errors/errors.js';
import { DOCKER_HUB, type ImageReference, isValidDigest, parseReference } from './reference.js';

export interface ParsedImageString {
  readonly ref: ImageReference;
  /** The pinned digest (`@sha256:...`), when the reference carries one. */
  readonly digest?: string;
}

const looksLikeRegistry = (segment: string): boolean =>
  segment.includes('.') || segment.includes(':') || segment === 'localhost' || segment.startsWith('[');

export function parseImageString(
  text: string,
  insecureRegistries: readonly string[],
): ParsedImageString | undefined {
  const at = text.indexOf('@');
  const named = at < 0 ? text : text.slice(0, at);
  const digest = at < 0 ? undefined : text.slice(at + 1);
  if (digest !== undefined && !isValidDigest(digest)) {
    return undefined;
  }
  const slash = named.indexOf('/');
  const first = slash < 0 ? '' : named.slice(0, slash);
  const [registry, path] =
    slash >= 0 && looksLikeRegistry(first) ? [first, named.slice(slash + 1)] : [DOCKER_HUB, named];
  const lastSlash = path.lastIndexOf('/');
  const colon = path.indexOf(':', lastSlash + 1);
  const name = colon < 0 ? path : path.slice(0, colon);
  const tag = colon < 0 ? 'latest' : path.slice(colon + 1);
  let ref: ImageReference;
  try {
    ref = parseReference({ registry, name, tag }, insecureRegistries);
  } catch (err) {
    if (isServiceError(err)) return undefined;
    throw err;
  }
  return digest === undefined ? { ref } : { ref, digest };
}
