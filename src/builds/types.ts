/**
 * The build registry: what the builds of the service are doing now, and how the newest finished
 * ones ended. An interface, so that a shared implementation (several replicas) can replace the
 * embedded one (memory-registry.ts) without touching the routes: every method is async, ids
 * are made by the registry, records are plain JSON.
 */
import type { BuildStatus } from '../observability/metrics.js';
import type { BuildTrigger } from '../rules/build-classes.js';
import type { RequestedBy } from '../rules/caller.js';

export const BUILD_PHASES = ['queued', 'cloning', 'resolving', 'building', 'reusing', 'finished'] as const;
export type BuildPhase = (typeof BUILD_PHASES)[number];
export type RunningPhase = Exclude<BuildPhase, 'finished'>;

/** Which builder builds which platforms of a build (docs/fleet.md). */
export interface PlatformBuilder {
  readonly builder: string;
  readonly platforms: readonly string[];
}

/** What started a build: a POST /build (`api`, also when absent) or a prebuild (docs/prebuilds.md). */
export type { BuildTrigger } from '../rules/build-classes.js';

/** Exactly what a synchronous POST /build is answered: its status and JSON body. */
export interface BuildAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** What is known when a build is admitted. */
export interface NewBuild {
  readonly requestId: string;
  readonly trigger?: BuildTrigger;
  /** The request's Idempotency-Key, if any (never a credential: a key the client chose). */
  readonly idempotencyKey?: string;
  /** Who asked for it, when identities are enforced (docs/auth.md); never a token. */
  readonly requestedBy?: RequestedBy;
  /** As the request gave it (a URL with credentials is refused before any build starts). */
  readonly repository: string;
  /** The tenant of its quotas and turn in the queue (docs/queue.md); absent: the repository's owner. */
  readonly tenant?: string;
  /** The requested branch or tag; the default branch's name is reported once cloned. */
  readonly branch?: string;
  /** The target `<registry>/<name>[:<tag>]`; the full reference is reported once the commit is known. */
  readonly image: string;
  /** The builder endpoint it was placed on (docs/fleet.md); never credentials. */
  readonly builder?: string;
  /** Each builder and its platforms, when the platforms were placed one by one. */
  readonly builders?: readonly PlatformBuilder[];
  /** Waits in the queue for a slot (phase `queued`) instead of starting now (docs/queue.md). */
  readonly queued?: boolean;
}

/** One stage of a build as it ended (workers/stages/table.ts numbers and names them). */
export interface BuildStage {
  /** Its number in the table of stages (workers/stages/table.ts). */
  readonly number?: number;
  readonly name: string;
  /** ISO 8601, UTC. */
  readonly startedAt: string;
  readonly durationMs: number;
}

/** One step of BuildKit's build (a Dockerfile instruction), as its own progress reported it. */
export interface BuildStep {
  /** Its position and instruction as BuildKit names them, without the stage: `[2/3] RUN apt-get update`. */
  readonly name: string;
  /** The Dockerfile stage it belongs to, when it is a named stage of the repository's Dockerfile. */
  readonly stage?: string;
  /** Answered from BuildKit's cache, not run. */
  readonly cached: boolean;
  /** ISO 8601, UTC: when the service read the step's start in BuildKit's progress. */
  readonly startedAt: string;
  /**
   * As BuildKit reported it; 0 for a cached step; for one that failed or never ended, the time the
   * service saw it take (absent only in records of earlier versions).
   */
  readonly durationMs?: number;
  /** BuildKit's error line for this step. */
  readonly error?: string;
}

/** The image a build pushed, from the registry's manifests. */
export interface PushedImage {
  /** The digest the registry serves for the tag (an index or a manifest). */
  readonly digest: string;
  /** Each platform's manifest and the compressed size of its layers (bytes). */
  readonly platforms: readonly {
    readonly platform: string;
    readonly digest: string;
    readonly compressedBytes: number;
  }[];
}

/** A build key and each of its inputs by name with its digest (no secret's value: docs/reuse.md). */
export interface BuildKeyView {
  readonly key: string;
  readonly inputs: readonly { readonly name: string; readonly digest: string }[];
}

/** A file under a path of the read set that differs from the earlier build's. */
interface ChangedFile {
  /** Repository-relative. */
  readonly path: string;
  readonly change: 'added' | 'changed' | 'removed';
}

/** One input of the key that differs from the earlier build's. */
export interface ChangedInput {
  /** As the key's inputs name it: `config file`, `path .devcontainer`, `base image <ref>`. */
  readonly input: string;
  /** Its old and new value (object id, digest); absent where none may be shown (build secrets). */
  readonly before?: string;
  readonly after?: string;
  /** For a path: the files under it that differ (at most 50), when the trees could be read. */
  readonly files?: readonly ChangedFile[];
  /** For a path: how many more files differ than `files` names. */
  readonly moreFiles?: number;
}

/** Why a build ran: its key's inputs that differ from the newest earlier build of its repository and branch. */
export interface RebuiltBecause {
  /** The earlier build compared with; absent when there was none. */
  readonly since?: string;
  /** One line per input that differs (a path's with its files), or `no earlier build`. */
  readonly inputs: readonly string[];
  /** The same inputs, each with its old and new value and, for a path, its files. */
  readonly changes?: readonly ChangedInput[];
}

/** What a build's record tells of how it went (each part set once known). */
export interface BuildDetails {
  readonly stages?: readonly BuildStage[];
  readonly steps?: readonly BuildStep[];
  readonly cachedSteps?: number;
  readonly totalSteps?: number;
  readonly pushed?: PushedImage;
  readonly key?: BuildKeyView;
  readonly rebuiltBecause?: RebuiltBecause;
}

/** Fields a running build learns as it goes (each set once known; absent fields are left as they are). */
export interface BuildUpdate {
  readonly phase?: RunningPhase;
  readonly branch?: string;
  readonly commit?: string;
  readonly image?: string;
  readonly gitCloneLogId?: string;
  readonly imageBuildLogId?: string;
  /** The build moved to another builder (the one it was placed on did not answer). */
  readonly builder?: string;
  readonly builders?: readonly PlatformBuilder[];
  /** Replaces the record's details (the reporter sends them whole). */
  readonly details?: BuildDetails;
}

/** How a build ended. */
export interface BuildOutcome {
  /** The status it was counted with in service_builds_total (`busy` never: a refused build never started). */
  readonly status: BuildStatus;
  /** The duration it was timed with in service_build_duration_seconds. */
  readonly durationSeconds: number;
  /** The built image, on success. */
  readonly image?: string;
  /** The error text of the answer (the same as the response body's `error`), on failure. */
  readonly error?: string;
  /** What a synchronous request is answered (every waiter gets it). */
  readonly answer?: BuildAnswer;
}

/** One build as GET /builds lists it (JSON; never a credential). */
export interface BuildRecord extends BuildDetails {
  readonly id: string;
  readonly requestId: string;
  readonly trigger?: BuildTrigger;
  /** Who asked for it, when identities are enforced (docs/auth.md). */
  readonly requestedBy?: RequestedBy;
  readonly repository: string;
  /** Whose build it is, as the queue names it (docs/queue.md): by default the repository's owner. */
  readonly tenant?: string;
  readonly branch?: string;
  readonly commit?: string;
  readonly image: string;
  readonly phase: BuildPhase;
  /** ISO 8601, UTC. */
  readonly startedAt: string;
  /** Seconds since startedAt (running), or the build's duration (finished). */
  readonly elapsedSeconds: number;
  readonly gitCloneLogId?: string;
  readonly imageBuildLogId?: string;
  /** The builder endpoint the build ran on (docs/fleet.md). */
  readonly builder?: string;
  /** Each builder and the platforms it built, when the platforms were placed one by one. */
  readonly builders?: readonly PlatformBuilder[];
  /** Requests waiting on this build (1 unless others follow it). */
  readonly waiters: number;
  /** While queued: its place in the queue (`position` 1 starts next; `ahead` start before it). */
  readonly queue?: { readonly position: number; readonly ahead: number };
  readonly status?: BuildOutcome['status'];
  readonly durationSeconds?: number;
  readonly error?: string;
  /** Once finished: exactly what a synchronous POST /build was (or would have been) answered. */
  readonly answer?: BuildAnswer;
}

/**
 * Called once a build's record is finished (its answer included), and awaited before the answer
 * reaches any waiter; a listener's failure is logged and never fails the build.
 */
export type BuildEndedListener = (record: BuildRecord) => Promise<void>;

/** `running` (started, not finished), `queued`, or a metric status (service_builds_total). */
export type BuildStatusFilter = 'running' | 'queued' | BuildStatus;

/** Every given field must match exactly; an empty filter lists everything. */
export interface BuildFilter {
  readonly requestId?: string;
  readonly repository?: string;
  readonly status?: BuildStatusFilter;
  /** The branch as the record tells it (requested, or the default branch once cloned). */
  readonly branch?: string;
  /** `api` matches the builds of POST /build (whose records carry no trigger). */
  readonly trigger?: BuildTrigger;
  /** The subject of `requestedBy` (an ID token's `sub`, a static token's name). */
  readonly caller?: string;
  /** The build's tenant as the queue names it (docs/queue.md). */
  readonly tenant?: string;
}

/** Which page of GET /builds: at most `limit` records after the cursor `after` (none: the first). */
export interface PageRequest {
  readonly limit: number;
  readonly after?: string;
  /** Only records it accepts fill the page (the caller's visibility); the rest are passed over. */
  readonly visible?: (record: BuildRecord) => boolean;
}

/** One page, newest first; `next` (absent on the last page) is the cursor of the following one. */
export interface BuildPage {
  readonly builds: BuildRecord[];
  readonly next?: string;
}

/** A record changed (started, moved on, finished): what the change feed tells, never more. */
export interface BuildChange {
  readonly id: string;
  readonly repository: string;
}

/**
 * An Idempotency-Key as the registry holds it: `reserved` (this request starts the build, then
 * binds its id to the key, or releases the key when it is refused), or `taken` by an earlier
 * request (with the same body digest or not; its build's id once admitted). A key whose build's
 * record is no longer kept is free again.
 */
export type KeyReservation =
  /** `token`: this reservation's own, so that only its request may free it. */
  | { readonly kind: 'reserved'; readonly token: string }
  | { readonly kind: 'taken'; readonly sameBody: boolean; readonly buildId?: string };

export interface BuildRegistry {
  /** Records a build that was just admitted (phase `cloning`, 1 waiter); resolves with its new id. */
  start(build: NewBuild): Promise<string>;
  /** Merges what a running build learned; an unknown or finished id is ignored. */
  update(id: string, update: BuildUpdate): Promise<void>;
  /**
   * A queued build taken by this replica to run now: phase `cloning`, leased by this replica
   * (Redis mode); false when it is no longer queued (cancelled, or taken by another).
   */
  adopt(id: string): Promise<boolean>;
  /**
   * Redis mode: hands the running build `id` back to the shared queue (this replica stops before it
   * could finish it): `enqueue` puts it in the queue, then its record waits again (phase `queued`)
   * for another replica to adopt. False when this replica no longer leases it: nothing changed.
   * Embedded: absent (no other replica could run it).
   */
  handBack?(id: string, enqueue: () => Promise<void>): Promise<boolean>;
  /**
   * Redis mode: the record of build `id`, running without lease on `replica` that died, waits
   * again (phase `queued`) for the queue to put it back; false when it is no longer that replica's
   * (it ended, or runs elsewhere). Embedded: absent.
   */
  queueAgain?(id: string, replica: string): Promise<boolean>;
  /**
   * Redis mode: calls `listener` with each build running here whose lease another replica took
   * (its replica was thought dead, and it runs elsewhere now). Embedded: absent.
   */
  onTakenOver?(listener: (id: string) => void): void;
  /** Changes the number of requests waiting on a running build by `delta` (requests that follow it). */
  addWaiters(id: string, delta: number): Promise<void>;
  /** Marks a build finished; only the newest N finished builds are kept (N: config.build.history). */
  finish(id: string, outcome: BuildOutcome): Promise<void>;
  /** A page of the running and kept finished builds matching `filter`, newest first (by startedAt). */
  list(filter: BuildFilter, page: PageRequest): Promise<BuildPage>;
  /** The build whose command log is `logId`, while its record is kept. */
  ownerOfLog(logId: string): Promise<BuildRecord | undefined>;
  /** Calls `listener` on each change of a record (on any replica in Redis mode); returns the stop. */
  watchChanges(listener: (change: BuildChange) => void): Promise<() => void>;
  /** One build's record; undefined when unknown or no longer kept. */
  get(id: string): Promise<BuildRecord | undefined>;
  /**
   * The record once the build has finished, or as it stands after `ms` (or when `signal` aborts):
   * a long poll, woken when the build finishes here or (Redis mode) on any replica.
   */
  waitFinished(id: string, ms: number, signal?: AbortSignal): Promise<BuildRecord | undefined>;
  /**
   * Asks the replica running `id` to cancel it (Redis mode; embedded: nobody else runs builds);
   * `onCancel` is how this replica hears of such asks for the builds it runs.
   */
  requestCancel(id: string, by: string): Promise<void>;
  onCancel(listener: (id: string, by: string) => void): void;
  /**
   * Redis mode: told of each build whose replica died, as this replica's read finished it as lost
   * (once for all replicas); its end's listeners run here. Embedded: never.
   */
  onLost(listener: (record: BuildRecord) => void): void;
  /** Reserves an Idempotency-Key for a body (its digest only: a body can hold credentials). */
  /** `token`: the reservation's, chosen by the request before it asks (so that it can free it). */
  reserveKey(key: string, digest: string, token: string): Promise<KeyReservation>;
  bindKey(key: string, buildId: string): Promise<void>;
  /**
   * Frees a key no build was bound to (its request queued nothing) while the reservation `token`
   * still holds it: a bound key, or one a later request reserved, stays.
   */
  releaseKey(key: string, token: string): Promise<void>;
}

/**
 * What a build job reports as it goes: a slice of the registry bound to one build. A failure to
 * report never fails the build (implementations log and carry on).
 */
export interface BuildReporter {
  phase(phase: RunningPhase): Promise<void>;
  /** A command log of the build was opened (its id is listed from now on). */
  logOpened(kind: 'git' | 'img', logId: string): Promise<void>;
  /** The build moved to the builder `endpoint` (its platforms to `builders`). */
  builder(endpoint: string, builders?: readonly PlatformBuilder[]): Promise<void>;
  /** Merges `details` into what the record tells of the build (stages, steps, image, key). */
  details(details: BuildDetails): Promise<void>;
  /** The clone told what is being built. */
  resolved(found: {
    readonly branch: string;
    readonly commit: string;
    readonly image: string;
  }): Promise<void>;
}
