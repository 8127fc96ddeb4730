/**
 * Patterns for request text that may reach a command, a file or a header (JSON schema
 * `pattern` strings, shared by the POST /build body and the registry endpoints' query). Pure.
 */

/** No C0 control character (CR, LF, NUL...), no DEL. */
export const NO_CONTROL_PATTERN = '^[^\\x00-\\x1f\\x7f]+$';
/** A basic-auth user name: no control character, and no `:` (it would end the name). */
export const BASIC_AUTH_USER_PATTERN = '^[^\\x00-\\x1f\\x7f:]+$';
/** A full git object id: SHA-1 (40 hex) or SHA-256 (64 hex), lower-case as git prints it. */
export const GIT_OBJECT_ID_PATTERN = '^(?:[0-9a-f]{40}|[0-9a-f]{64})$';
