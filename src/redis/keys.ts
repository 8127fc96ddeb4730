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
 * Build records and their indexes share the hash tag `{builds}`: every script on them names keys
 * of one Redis Cluster slot, all passed in KEYS.
 */
const BUILDS = `${PREFIX}{builds}:`;
/** A build's record (JSON), running or finished (then expiring); its lease is buildAliveKey. */
export const buildKey = (id: string): string => `${BUILDS}build:${id}`;
/** What follows a build's key in its lease's key and in its channel. */
const BUILD_ALIVE_SUFFIX = ':alive';
const BUILD_END_SUFFIX = ':end';
/** A running build's lease: its replica's name, expiring unless the replica renews it. */
export const buildAliveKey = (id: string): string => `${buildKey(id)}${BUILD_ALIVE_SUFFIX}`;
/**
 * When a read first found a running build without its lease nor its replica's heartbeat (ms,
 * expiring): a later read ends it as lost only once a live replica would have renewed it.
 */
export const buildUnleasedKey = (id: string): string => `${buildKey(id)}:unleased`;
/** A build's channel: published when it finishes (long polls of GET /builds/{id}?wait). */
export const buildEndChannel = (id: string): string => `${buildKey(id)}${BUILD_END_SUFFIX}`;
/** Published when a DELETE asks the replica running a build to cancel it. */
export const BUILD_CANCEL_CHANNEL = `${PREFIX}builds:cancel`;
/** Published on each change of a record: `{"id","repository"}` (the change feed of the pages). */
export const BUILD_CHANGES_CHANNEL = `${PREFIX}builds:changed`;
/** The kept finished build ids by finish time (the history's bound and expiry). */
export const FINISHED_BUILDS = `${BUILDS}finished`;
/** Build ids by start time: every kept build (`all`), or those with one value of a field. */
export const buildIndexKey = (field: string, value?: string): string =>
  value === undefined ? `${BUILDS}index:${field}` : `${BUILDS}index:${field}:${value}`;
/** The build a command log belongs to (its id), while the build's record is kept. */
export const logOwnerKey = (logId: string): string => `${BUILDS}log-owner:${logId}`;

/**
 * The shared build queue (docs/queue.md, src/queue/redis-queue-scripts.ts). Every key carries the
 * hash tag `{queue}`, so that each queue script's keys share one Redis Cluster slot; the scripts
 * are given all of them in KEYS (QUEUE_KEYS, in this order) and build no key name.
 */
const QUEUE_PREFIX = `${PREFIX}{queue}:`;
/** Per level of the order (0 api, 1 push, 2 reconcile and refresh). */
const QUEUE_LEVELS = [0, 1, 2] as const;
export const QUEUE_KEYS: readonly string[] = [
  /** Waiting builds: a hash id -> `seq NUL class NUL tenant NUL lane NUL entry JSON`. */
  `${QUEUE_PREFIX}entries`,
  /**
   * Builds taken from the queue or counted under its quotas, while they run: a hash id -> `tenant
   * NUL since ms NUL replica NUL class NUL entry JSON` (the entry only when any replica may run it).
   */
  `${QUEUE_PREFIX}running`,
  /** Counters: a hash (waiting per class, per tenant, per level and tenant; running per tenant). */
  `${QUEUE_PREFIX}counts`,
  /** Each tenant's quota of running builds: a hash tenant -> maxRunning. */
  `${QUEUE_PREFIX}quotas`,
  /** The replicas holding builds only they can run: a hash replica -> how many. */
  `${QUEUE_PREFIX}owners`,
  /** When the last takes happened (ms): a list, newest first, capped. */
  `${QUEUE_PREFIX}takes`,
  /** The builds only their replica can run: a sorted set by `replica NUL id`. */
  `${QUEUE_PREFIX}held`,
  /** Per level, the tenants with builds waiting, by turn (the one served longest ago first). */
  ...QUEUE_LEVELS.map((level) => `${QUEUE_PREFIX}ring:${level}`),
  /** Per level, the waiting builds by `tenant NUL seq NUL id` (a tenant's line, first come first). */
  ...QUEUE_LEVELS.map((level) => `${QUEUE_PREFIX}line:${level}`),
  /** Per level, the same by `tenant NUL lane NUL seq NUL id` (lane `*`: any replica may run it). */
  ...QUEUE_LEVELS.map((level) => `${QUEUE_PREFIX}lanes:${level}`),
];
/**
 * The answer of one take from the queue (its token: random, one per take), kept a minute so that
 * the take repeated after a broken connection answers the same build; the queue's hash tag.
 */
export const queueTakeKey = (token: string): string => `${QUEUE_PREFIX}take:${token}`;
/** Published when work arrives or a tenant's quota frees (not a key: Redis Cluster broadcasts it). */
export const BUILD_QUEUE_CHANNEL = `${QUEUE_PREFIX}changed`;
/** A replica's heartbeat while it holds queued builds (its name, with a lease); not a queue key. */
export const replicaAliveKey = (replica: string): string => `${PREFIX}{replica:${replica}}`;

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
/**
 * A person's session (docs/auth.md) by the HMAC of its id, never the id: a JSON value with a TTL at
 * the session's end; the hash tag keeps it in one slot of a cluster.
 */
export const sessionKey = (digest: string): string => `${PREFIX}{session:${digest}}`;
/** The key of those HMACs (32 random bytes, hex), set once by whichever replica needs it first. */
export const SESSIONS_HMAC_KEY = `${PREFIX}{sessions}:hmac-key`;

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
