/**
 * The value sets of the options that take one of a few words, apart from types.ts: the option
 * table reads them, and Config's type is derived from the table.
 */
export { LAYER_COMPRESSIONS } from '../rules/limits.js';

export const PROVENANCE_MODES = ['min', 'max', 'off'] as const;
/** `buildx build --provenance`: min and max as BuildKit's modes, off for none. */
export type ProvenanceMode = (typeof PROVENANCE_MODES)[number];

/** Caller identity (docs/auth.md): `off` asks no caller for an identity; `enforce` asks every caller. */
export const AUTH_MODES = ['off', 'enforce'] as const;
/** What an access rule grants (docs/auth.md lists the routes of each). */
export const AUTH_ACTIONS = ['build', 'read', 'cancel', 'delete', 'admin'] as const;
export type AuthAction = (typeof AUTH_ACTIONS)[number];

/** What the scheduled image retention does (docs/retention.md). */
export const RETENTION_MODES = ['off', 'dry-run', 'delete'] as const;

/** How an SSH host key is trusted: on first use, or only as the credential entry pins it. */
export const SSH_HOST_KEY_POLICIES = ['tofu', 'pinned'] as const;
export type SshHostKeyPolicy = (typeof SSH_HOST_KEY_POLICIES)[number];
