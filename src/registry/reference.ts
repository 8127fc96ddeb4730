/**
 * THE OCI reference grammar of the service (https://github.com/distribution/reference; the patterns:
 * rules/image-reference.ts): registry with an optional namespace path, name, tag, digest, Docker Hub
 * aliases. Every caller imports its parsers from here (POST /build, mapping rules, registry auth,
 * /image, /devcontainer). A namespace path goes to the name and the API call to the host
 * (docs/behaviour.md). Pure; parseReference throws a 400 ServiceError before any network call.
 */
import { serviceError, type ServiceError } from '../errors/errors.js';
import {
  DIGEST_PATTERN,
  MAX_NAME_LENGTH,
  NAME_PATTERN,
  REGISTRY_PATTERN,
  TAG_PATTERN,
} from '../rules/image-reference.js';
import { TaggedImageTarget } from '../rules/image-target.js';

const NAME_RE = new RegExp(NAME_PATTERN);
const TAG_RE = new RegExp(TAG_PATTERN);
const REGISTRY_RE = new RegExp(REGISTRY_PATTERN);
const DIGEST_RE = new RegExp(DIGEST_PATTERN);
const SCHEME_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;

const isValidName = (name: string): boolean => name.length <= MAX_NAME_LENGTH && NAME_RE.test(name);
export const isValidTag = (tag: string): boolean => TAG_RE.test(tag);
export const isValidDigest = (digest: string): boolean => DIGEST_RE.test(digest);

/** Docker Hub's name: a reference without a registry part, and every alias below, mean it. */
export const DOCKER_HUB = 'docker.io';
/** Where Docker Hub's registry API answers. */
const DOCKER_HUB_HOST = `registry-1.${DOCKER_HUB}`;
/** The key `docker login` writes for Docker Hub in a docker config. */
export const DOCKER_HUB_AUTH_KEY = `https://index.${DOCKER_HUB}/v1/`;
const DOCKER_HUB_ALIASES = new Set([DOCKER_HUB, `index.${DOCKER_HUB}`, DOCKER_HUB_HOST]);
const isDockerHub = (host: string): boolean => DOCKER_HUB_ALIASES.has(host.toLowerCase());

/**
 * The `host[:port]` of a registry, an insecure-registry entry or a docker config key, lower-cased:
 * a scheme and a namespace path are dropped (`https://Ghcr.io/org` -> `ghcr.io`), as docker's
 * ConvertToHostname does. Every by-host match of the service goes through it.
 */
export function registryHost(text: string): string {
  let rest = text.trim();
  const scheme = SCHEME_RE.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  if (slash >= 0) rest = rest.slice(0, slash);
  return rest.toLowerCase();
}

/** The same registry host whatever alias names it (all Docker Hub aliases are `docker.io`). */
export const canonicalRegistryHost = (text: string): string => {
  const host = registryHost(text);
  return isDockerHub(host) ? DOCKER_HUB : host;
};

/** The docker config key a credential for `registry` is written under (by host). */
export const authKeyFor = (registry: string): string =>
  canonicalRegistryHost(registry) === DOCKER_HUB ? DOCKER_HUB_AUTH_KEY : registryHost(registry);

/** Whether `host` (host[:port]) is listed in insecureRegistries (entries may carry a scheme or path). */
export function isInsecureRegistry(host: string, insecureRegistries: readonly string[]): boolean {
  const wanted = registryHost(host);
  return insecureRegistries.some((entry) => registryHost(entry) === wanted);
}

/** A registry (no scheme) split into its host and its namespace path, or undefined off the grammar. */
export function splitRegistry(registry: string): { host: string; namespace?: string } | undefined {
  if (!REGISTRY_RE.test(registry)) return undefined;
  const slash = registry.indexOf('/');
  const host = slash < 0 ? registry : registry.slice(0, slash);
  const port = /:([0-9]+)$/.exec(host)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  return slash < 0 ? { host } : { host, namespace: registry.slice(slash + 1) };
}

export interface ImageReference {
  /** The registry as the caller named it, without scheme (`127.0.0.1:5000`, `ghcr.io/org`). */
  readonly registry: string;
  /** host[:port] actually contacted, lower-cased (`docker.io` -> `registry-1.docker.io`). */
  readonly host: string;
  readonly scheme: 'https' | 'http';
  /** `https://host[:port]` */
  readonly origin: string;
  /**
   * Repository name as sent to the registry: the registry's namespace path prefixed
   * (`org/app`), `library/` added for single-segment Docker Hub names.
   */
  readonly name: string;
  readonly tag: string;
  /** The image as the caller named it (registry with its namespace path, name, tag): never re-split. */
  readonly target: TaggedImageTarget;
  /** `<registry>/<name>:<tag>` as the caller gave it (as POST /build answers it): `target.image`. */
  readonly image: string;
}

export interface ReferenceInput {
  registry: string;
  name: string;
  tag: string;
}

/** Validates and resolves a registry/name/tag triple (throws a 400 ServiceError). */
export function parseReference(input: ReferenceInput, insecureRegistries: readonly string[]): ImageReference {
  let registry = input.registry.trim();
  let explicitScheme: 'https' | 'http' | undefined;
  const scheme = SCHEME_RE.exec(registry);
  if (scheme) {
    const s = (scheme[1] ?? '').toLowerCase();
    if (s !== 'https' && s !== 'http') {
      throw serviceError('REGISTRY_SCHEME_NOT_ALLOWED', { scheme: s });
    }
    explicitScheme = s;
    registry = registry.slice(scheme[0].length).replace(/\/+$/, '');
  }
  const split = splitRegistry(registry);
  if (split === undefined) {
    throw serviceError('INVALID_REGISTRY', { registry: input.registry });
  }
  const named = split.host.toLowerCase();
  const host = isDockerHub(named) ? DOCKER_HUB_HOST : named;
  const insecure =
    isInsecureRegistry(host, insecureRegistries) || isInsecureRegistry(named, insecureRegistries);
  if (explicitScheme === 'http' && !insecure) {
    throw serviceError('REGISTRY_HTTP_NOT_ALLOWED');
  }
  const resolvedScheme = explicitScheme ?? (insecure ? 'http' : 'https');

  const name = input.name;
  const path = split.namespace === undefined ? name : `${split.namespace}/${name}`;
  if (!isValidName(name) || path.length > MAX_NAME_LENGTH) {
    throw serviceError('INVALID_IMAGE_NAME', { name });
  }
  if (!isValidTag(input.tag)) {
    throw serviceError('INVALID_TAG', { tag: input.tag });
  }
  const remoteName = host === DOCKER_HUB_HOST && !path.includes('/') ? `library/${path}` : path;
  const target = new TaggedImageTarget(registry, name, input.tag);
  return Object.freeze({
    registry,
    host,
    scheme: resolvedScheme,
    origin: `${resolvedScheme}://${host}`,
    name: remoteName,
    tag: input.tag,
    target,
    image: target.image,
  });
}

/**
 * The 502 for an answer a registry call did not expect: the registry, the status and the image
 * (`image` when the call was about one part of it, a digest or a blob).
 */
export const unexpectedAnswer = (
  ref: Pick<ImageReference, 'registry' | 'image'>,
  status: number,
  image: string = ref.image,
): ServiceError => serviceError('REGISTRY_ANSWERED', { registry: ref.registry, status, image });
