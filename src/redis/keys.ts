/**
 * Every Redis key and channel of the service, and the one prefix (docs/redis.md). Lua scripts are
 * given these keys in KEYS, never spelling them. Each key carries a hash tag (`{...}`): the keys one
 * script or MULTI touches share it, so they share a slot of a Redis Cluster. One item's keys share
 * a tag of their own (a log's text and meta: `{log:<id>}`), so items spread over the cluster; a
 * collection changed atomically shares one (`{events}`, `{retention}`). Channels need no tag.
 * Also the limits the log store and writer share. Pure.
 */
const PREFIX = 'ibs:';

/** A log's text: a list of elements of up to 1 MiB (an empty one, then one per append). */
export const textKey = (id: string): string => `${PREFIX}{log:${id}}`;
/** A log's meta: a hash {kind, state: open|closed}, in its text's slot. */
export const metaKey = (id: string): string => `${textKey(id)}:meta`;
/** The closed logs of a kind: a sorted set scored by close time. */
export const closedKey = (kind: string): string => `${PREFIX}{logs:${kind}}`;
/** A log's channel: appends (`a`), the close (`c`) and the deletion (`d`). */
export const channelOf = textKey;

/**
 * The build records and the queue (one tag: the scripts that read or end records touch the running
 * and finished sets, the queue and each record's lease together).
 */
const BUILDS = `${PREFIX}{builds}`;
/** A running build's record (JSON), GET /builds; its lease is buildAliveKey. */
export const buildKey = (id: string): string => `${BUILDS}:build:${id}`;
/** What follows a build's key in its lease's key and in its channel (scripts append them to an id). */
export const BUILD_ALIVE_SUFFIX = ':alive';
export const BUILD_END_SUFFIX = ':end';
/** A running build's lease: its replica's name, expiring unless the replica renews it. */
export const buildAliveKey = (id: string): string => `${buildKey(id)}${BUILD_ALIVE_SUFFIX}`;
/** A build's channel: published when it finishes (long polls of GET /builds/{id}?wait). */
export const buildEndChannel = (id: string): string => `${buildKey(id)}${BUILD_END_SUFFIX}`;
/** Published when a DELETE asks the replica running a build to cancel it. */
export const BUILD_CANCEL_CHANNEL = `${PREFIX}builds:cancel`;
/** Running build ids by start time; the newest finished records by finish time. */
export const RUNNING_BUILDS = `${BUILDS}:running`;
export const FINISHED_BUILDS = `${BUILDS}:finished`;

/** The shared build queue: one JSON document (docs/queue.md), and its change channel. */
export const BUILD_QUEUE = `${BUILDS}:queue`;
export const BUILD_QUEUE_CHANNEL = `${PREFIX}queue:changed`;
/** A replica's heartbeat while it holds queued builds (its name, with a lease). */
export const replicaAliveKey = (replica: string): string => `${BUILDS}:replica:${replica}`;

/** An Idempotency-Key of POST /build, by the SHA-256 of the key: a hash {digest (of the body), id}. */
export const idempotencyKey = (keyHash: string): string => `${PREFIX}{idempotency:${keyHash}}`;

/** A build key's lease (its holder's token), its released outcome, and its channel. */
export const leaseKey = (id: string): string => `${PREFIX}{lease:${id}}`;
export const leaseOutcomeKey = (id: string): string => `${leaseKey(id)}:outcome`;
export const leaseChannel = leaseKey;
/** The commits answered for a request shape (a digest): a hash commit -> JSON (docs/reuse.md). */
export const answeredKey = (shape: string): string => `${PREFIX}{answered:${shape}}`;
/** The key inputs of the last build of a repository, branch and target (by a digest of them). */
export const recentInputsKey = (digest: string): string => `${PREFIX}{recent:${digest}}`;

/** Retention (one tag: a mark adds to the set of repositories in the same MULTI). */
const RETENTION = `${PREFIX}{retention}`;
/** Retention: when each digest or tag of a repository was last served (a hash ref -> ms). */
export const servedKey = (repository: string): string => `${RETENTION}:served:${repository}`;
/** Retention: the registry repositories builds were answered for (a set). */
export const RETENTION_REPOSITORIES = `${RETENTION}:repositories`;
/** Retention: the run lock (its holder's token, with a TTL renewed while the run lasts). */
export const RETENTION_LOCK = `${RETENTION}:lock`;
/** The prebuild schedules' lock: its holder's token, with a lease (docs/prebuilds.md). */
export const SCHEDULE_LOCK = `${PREFIX}{prebuilds}:schedule-lock`;
/**
 * Events (one tag: an event is recorded in every subscription's journal and in the deliveries in
 * one MULTI; subscriptions are few).
 */
const EVENTS = `${PREFIX}{events}`;
/** A subscription's event journal: a stream read by the DELIVERY_GROUP consumer group. */
export const eventStreamKey = (subscription: string): string => `${EVENTS}:${subscription}`;
export const DELIVERY_GROUP = 'delivery';
/** Which replica delivers a subscription now (its consumer name, with a TTL). */
export const eventOwnerKey = (subscription: string): string => `${EVENTS}:${subscription}:owner`;
/** The URL a subscription was disabled at (410); another URL enables it again. */
export const eventDisabledKey = (subscription: string): string => `${EVENTS}:${subscription}:disabled`;
/** Recent deliveries: a hash `<subscription> <event id>` -> JSON, and its index by record time. */
export const EVENT_DELIVERIES = `${EVENTS}:deliveries`;
export const EVENT_DELIVERIES_INDEX = `${EVENTS}:deliveries:index`;
/** The build secrets identity key (32 random bytes, hex), set once by whichever replica needs it first. */
export const SECRETS_IDENTITY_KEY = `${PREFIX}{build-secrets}:identity-key`;

/** Per-log size cap: output beyond it is dropped, and one marker line says so. */
export const LOG_SIZE_CAP_BYTES = 50 * 1024 * 1024;
export const TRUNCATED_MARKER = '\n[image-build-service: log truncated at 50 MiB; further output dropped]\n';
/** An open log (its writer died with its replica) expires after this long without output. */
export const OPEN_LOG_IDLE_TTL_MS = 24 * 3600 * 1000;
