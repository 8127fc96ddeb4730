/**
 * The registry/name/tag of GET/DELETE /image and GET /devcontainer: grammar checks and the
 * network location they resolve to. Pure: no I/O. Anything invalid throws a 400 ServiceError,
 * before any network call.
 */
import { authKeyHost } from '../config/docker-auth.js';
import {
  invalidImageName,
  invalidRegistry,
  invalidTag,
  registryHttpNotAllowed,
  registrySchemeNotAllowed,
} from '../errors.js';

export interface ImageReference {
  /** The registry as the caller named it, without scheme (`127.0.0.1:5000`, `docker.io`). */
  readonly registry: string;
  /** host[:port] actually contacted (`docker.io` -> `registry-1.docker.io`). */
  readonly host: string;
  readonly scheme: 'https' | 'http';
  /** `https://host[:port]` */
  readonly origin: string;
  /** Repository name as sent to the registry (`library/` added for single-segment Docker Hub names). */
  readonly name: string;
  readonly tag: string;
  /** `<registry>/<name>:<tag>` as the caller gave it, for responses and messages. */
  readonly image: string;
}

const HOST_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const REGISTRY_RE = new RegExp(
  `^(?:${HOST_LABEL}(?:\\.${HOST_LABEL})*|\\[[0-9a-fA-F:.]+\\])(?::([0-9]{1,5}))?$`,
);
/** OCI distribution name grammar: path components separated by `/`. */
const NAME_COMPONENT = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const NAME_RE = new RegExp(`^${NAME_COMPONENT}(?:/${NAME_COMPONENT})*$`);
const TAG_RE = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const MAX_NAME_LENGTH = 255;

export const isValidTag = (tag: string): boolean => TAG_RE.test(tag);

const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);
const DOCKER_HUB_HOST = 'registry-1.docker.io';

/** Whether `host` (host[:port]) is listed in insecureRegistries (entries may carry a scheme or path). */
export function isInsecureRegistry(host: string, insecureRegistries: readonly string[]): boolean {
  const wanted = host.toLowerCase();
  return insecureRegistries.some((entry) => authKeyHost(entry) === wanted);
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
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(registry);
  if (scheme) {
    const s = (scheme[1] ?? '').toLowerCase();
    if (s !== 'https' && s !== 'http') {
      throw registrySchemeNotAllowed(s);
    }
    explicitScheme = s;
    registry = registry.slice(scheme[0].length).replace(/\/+$/, '');
  }
  const m = REGISTRY_RE.exec(registry);
  const port = m?.[1];
  if (!m || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
    throw invalidRegistry(input.registry);
  }
  const lower = registry.toLowerCase();
  const host = DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB_HOST : lower;
  const insecure =
    isInsecureRegistry(host, insecureRegistries) || isInsecureRegistry(lower, insecureRegistries);
  if (explicitScheme === 'http' && !insecure) {
    throw registryHttpNotAllowed();
  }
  const resolvedScheme = explicitScheme ?? (insecure ? 'http' : 'https');

  const name = input.name;
  if (name.length > MAX_NAME_LENGTH || !NAME_RE.test(name)) {
    throw invalidImageName(name);
  }
  if (!TAG_RE.test(input.tag)) {
    throw invalidTag(input.tag);
  }
  const remoteName = host === DOCKER_HUB_HOST && !name.includes('/') ? `library/${name}` : name;
  return Object.freeze({
    registry,
    host,
    scheme: resolvedScheme,
    origin: `${resolvedScheme}://${host}`,
    name: remoteName,
    tag: input.tag,
    image: `${registry}/${name}:${input.tag}`,
  });
}
