/**
 * Where a command log lives in Redis (shared by the store, which reads, follows and deletes, and
 * the writer, which appends and closes), and the limits both keep.
 *
 * Keys (prefix `ibs:`): `log:<id>` the text's bytes as a list of elements of up to 1 MiB (an empty
 * one, then one per append; an element may end inside a line or a character), `log:<id>:meta` a hash {kind, state: open|closed}, `logs:<kind>` a
 * sorted set of closed logs scored by close time. Channel `log:<id>` announces appends (`a`), the
 * close (`c`) and the deletion (`d`) to followers.
 */
export const PREFIX = 'ibs:';
export const textKey = (id: string): string => `${PREFIX}log:${id}`;
export const metaKey = (id: string): string => `${PREFIX}log:${id}:meta`;
export const closedKey = (kind: string): string => `${PREFIX}logs:${kind}`;
export const channelOf = textKey;

/** Per-log size cap: output beyond it is dropped, and one marker line says so. */
export const LOG_SIZE_CAP_BYTES = 50 * 1024 * 1024;
export const TRUNCATED_MARKER = '\n[image-build-service: log truncated at 50 MiB; further output dropped]\n';
/** An open log (its writer died with its replica) expires after this long without output. */
export const OPEN_LOG_IDLE_TTL_MS = 24 * 3600 * 1000;
