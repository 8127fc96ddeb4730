/**
 * The request limits and enumerations that the checks and the error texts (src/errors/errors.ts)
 * both state: each is written once, here. Pure, no imports.
 */

/** The builder modes of `buildOptions.mode` and `--builder-mode`. */
export const BUILDER_MODES = ['auto', 'never'] as const;
export type BuilderMode = (typeof BUILDER_MODES)[number];

/** The layer compressions of `buildOptions.compression` and `--build-compression` (docs/reuse.md). */
export const LAYER_COMPRESSIONS = ['gzip', 'zstd', 'estargz'] as const;
export type LayerCompression = (typeof LAYER_COMPRESSIONS)[number];

/** The largest request body read, in bytes (1 MiB). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** The realm of the bearer challenge (docs/auth.md). */
export const AUTH_REALM = 'image-build-service';
/** The longest bearer token read, in bytes (8 KiB): anything longer is refused unread. */
export const MAX_TOKEN_BYTES = 8 * 1024;

/** Webhook bodies (POST /hooks/*): GitHub's own cap, 25 MiB. */
export const HOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;

/** The longest request id (X-Request-Id). */
export const REQUEST_ID_MAX_LENGTH = 128;
/** The characters a request id may hold, as a pattern's character class. */
export const REQUEST_ID_CHARACTERS = '[A-Za-z0-9._:-]';
/** 1 to REQUEST_ID_MAX_LENGTH of REQUEST_ID_CHARACTERS: what a request id may be. */
export const REQUEST_ID_PATTERN = new RegExp(`^${REQUEST_ID_CHARACTERS}{1,${REQUEST_ID_MAX_LENGTH}}$`);
