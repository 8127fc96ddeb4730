/**
 * Patterns for request text that may reach a command, a file or a header (JSON schema
 * `pattern` strings, shared by the POST /build body and the registry endpoints' query). Pure.
 */

/** No C0 control character (CR, LF, NUL...), no DEL. */
export const NO_CONTROL_PATTERN = '^[^\\x00-\\x1f\\x7f]+$';
/** A basic-auth user name: no control character, and no `:` (it would end the name). */
export const BASIC_AUTH_USER_PATTERN = '^[^\\x00-\\x1f\\x7f:]+$';
