/**
 * Every Redis key and channel of the service, and the one prefix (docs/redis.md). Lua scripts are
 * given these keys (or a key's leading part, to which they append an id), never spelling them.
 * Also the limits the log store and writer share. Pure.
 */
const PREFIX = 'ibs:';

/** A log's text: a list of elements of up to 1 MiB (an empty one, then one per append). */
export const textKey = (id: string): string => `${PREFIX}log:${id}`;
/** What follows a log's text key in its meta key (a hash {kind, state: open|closed}). */
export const META_SUFFIX = ':meta';
export const metaKey = (id: string): string => `${textKey(id)}${META_SUFFIX}`;
/** The closed logs of a kind: a sorted set scored by close time. */
export const closedKey = (kind: string): string => `${PREFIX}logs:${kind}`;
/** A log's channel: appends (`a`), the close (`c`) and the deletion (`d`). */
export const channelOf = textKey;

/** A running build's record (JSON), GET /builds; its lease is buildAliveKey. */
export const buildKey = (id: string): string => `${PREFIX}build:${id}`;
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
export const RUNNING_BUILDS = `${PREFIX}builds:running`;
export const FINISHED_BUILDS = `${PREFIX}builds:finished`;

/** The shared build queue: one JSON document (docs/queue.md), and its change channel. */
export const BUILD_QUEUE = `${PREFIX}queue`;
export const BUILD_QUEUE_CHANNEL = `${PREFIX}queue:changed`;
/** A replica's heartbeat while it holds queued builds (its name, with a lease). */
export const replicaAliveKey = (replica: string): string => `${PREFIX}replica:${replica}`;

/** An Idempotency-Key of POST /build, by the SHA-256 of the key: a hash {digest (of the body), id}. */
export const idempotencyKey = (keyHash: string): string => `${PREFIX}idempotency:${keyHash}`;

/** A build key's lease (its holder's token), its released outcome, and its channel. */
export const leaseKey = (id: string): string => `${PREFIX}lease:${id}`;
export const leaseOutcomeKey = (id: string): string => `${leaseKey(id)}:outcome`;
export const leaseChannel = leaseKey;
/** The commits answered for a request shape (a digest): a hash commit -> JSON (docs/reuse.md). */
export const answeredKey = (shape: string): string => `${PREFIX}answered:${shape}`;
/** The key inputs of the last build of a repository, branch and target (by a digest of them). */
export const recentInputsKey = (digest: string): string => `${PREFIX}recent:${digest}`;

/** Retention: when each digest or tag of a repository was last served (a hash ref -> ms). */
export const servedKey = (repository: string): string => `${PREFIX}retention:served:${repository}`;
/** Retention: the registry repositories builds were answered for (a set). */
export const RETENTION_REPOSITORIES = `${PREFIX}retention:repositories`;
/** Retention: the run lock (its holder's token, with a TTL renewed while the run lasts). */
export const RETENTION_LOCK = `${PREFIX}retention:lock`;
/** The prebuild schedules' lock: its holder's token, with a lease (docs/prebuilds.md). */
export const SCHEDULE_LOCK = `${PREFIX}prebuilds:schedule-lock`;
/** A subscription's event journal: a stream read by the DELIVERY_GROUP consumer group. */
export const eventStreamKey = (subscription: string): string => `${PREFIX}events:${subscription}`;
export const DELIVERY_GROUP = 'delivery';
/** Which replica delivers a subscription now (its consumer name, with a TTL). */
export const eventOwnerKey = (subscription: string): string => `${PREFIX}events:${subscription}:owner`;
/** The URL a subscription was disabled at (410); another URL enables it again. */
export const eventDisabledKey = (subscription: string): string => `${PREFIX}events:${subscription}:disabled`;
/** Recent deliveries: a hash `<subscription> <event id>` -> JSON, and its index by record time. */
export const EVENT_DELIVERIES = `${PREFIX}event-deliveries`;
export const EVENT_DELIVERIES_INDEX = `${PREFIX}event-deliveries:index`;
/** The build secrets identity key (32 random bytes, hex), set once by whichever replica needs it first. */
export const SECRETS_IDENTITY_KEY = `${PREFIX}build-secrets:identity-key`;

/** Per-log size cap: output beyond it is dropped, and one marker line says so. */
export const LOG_SIZE_CAP_BYTES = 50 * 1024 * 1024;
export const TRUNCATED_MARKER = '\n[image-build-service: log truncated at 50 MiB; further output dropped]\n';
/** An open log (its writer died with its replica) expires after this long without output. */
export const OPEN_LOG_IDLE_TTL_MS = 24 * 3600 * 1000;

// --- usage (docs/usage.md): every key carries the hash tag {usage}, so that one script takes them all ---
const USAGE = `${PREFIX}{usage}:`;
/** An hour's usage buckets: a hash row id -> counters (packed), expiring after the retention. */
export const usageHourKey = (hour: number): string => `${USAGE}hour:${hour}`;
/** A day's usage buckets (days since the epoch): the same sums as its hours, read for long ranges. */
export const usageDayKey = (day: number): string => `${USAGE}day:${day}`;
/** A month's run seconds by tenant (a hash), what budgets count. */
export const usageMonthKey = (month: string): string => `${USAGE}month:${month}`;
/** A build's marker once its usage is counted (with a TTL): the write is made once per build id. */
export const usageCountedKey = (buildId: string): string => `${USAGE}counted:${buildId}`;
/** The run time of the build that made an image (by `key:<build key>` or `digest:<digest>`). */
export const usageImageKey = (ref: string): string => `${USAGE}image:${ref}`;
/** The time a step took when it last ran (by step identity). */
export const usageStepKey = (id: string): string => `${USAGE}step:${id}`;
