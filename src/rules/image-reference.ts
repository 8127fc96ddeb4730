/**
 * The grammar of image references and platforms (https://github.com/distribution/reference), as
 * JSON-schema pattern strings: the request schemas, the configuration check and the parsers in
 * registry/reference.ts and registry/platform.ts all take them from here. Pure, no imports.
 */

const HOST_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
/** DNS name, IPv4 or bracketed IPv6, optional port. */
const HOST_PORT = `(?:${HOST_LABEL}(?:\\.${HOST_LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?`;
/** One path component of a repository name. */
const NAME_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';

/** A repository name (path components joined by `/`), without registry. */
export const NAME_PATTERN = `^${NAME_COMPONENT}(?:/${NAME_COMPONENT})*$`;
/** A tag. */
export const TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';
/** A registry: `host[:port]` and an optional namespace path in the name grammar (`ghcr.io/org`). */
export const REGISTRY_PATTERN = `^${HOST_PORT}(?:/${NAME_COMPONENT})*$`;
/** A content digest (`sha256:<hex>`). */
export const DIGEST_PATTERN = '^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$';
/** The longest repository name, namespace included. */
export const MAX_NAME_LENGTH = 255;

/**
 * The two platform patterns of docs/openapi.yaml. A `platforms` item of POST /build (and the
 * `--build-platforms` default): lower-case os/arch[/variant] as buildx takes it.
 */
export const BUILD_PLATFORM_PATTERN = '^[a-z0-9]+/[a-z0-9_]+(?:/[a-z0-9]+)?$';
/** The `platform` parameter of GET /devcontainer: any os/arch[/variant], normalised before matching. */
export const PLATFORM_PARAM_PATTERN = '^[^/]+/[^/]+(/[^/]+)?$';
