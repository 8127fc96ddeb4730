/**
 * One build as a resource (docs/behaviour.md, Builds as resources): its record's id, its
 * cancellation, and its answer. Sync and async requests, DELETE and the GET routes all meet the
 * same build through it; a request that follows another's build holds that build's id instead of
 * a record of its own. The record is finished (answer included) and every ended listener
 * awaited before any waiter gets the answer.
 */
import { Cancellation, cancellationOf } from '../../src/exec/cancellation.js';
import { retryAfterDelays } from '../../src/errors/retry.js';
import type { Logger } from '../../src/observability/logger.js';
import { recordBuild, recordingOf, type BuildRecording } from '../../src/builds/reporter.js';
import type {
  BuildEndedListener,
  BuildOutcome,
  BuildRegistry,
  BuildReporter,
  NewBuild,
} from '../../src/builds/types.js';

/** The finished record is read again after each of these delays while the store fails (about 31 s). */
const RECORD_READ_RETRIES_MS = [500, 1000, 2000, 4000, 8000, 16_000];

/**
 * The states of a resource, in order; `followed`: it holds another build's id; `handed`: its
 * record went back to the shared queue (this replica stops), another replica ends it.
 */
type ResourceState = 'new' | 'recorded' | 'followed' | 'handed' | 'ended';

/** `reporter`, silent once `closed` holds (a build handed back reports nothing more). */
function gated(recording: BuildRecording, closed: () => boolean): BuildRecording {
  const { reporter } = recording;
  const quiet = Promise.resolve();
  return {
    ...recording,
    reporter: {
      phase: (phase) => (closed() ? quiet : reporter.phase(phase)),
      logOpened: (kind, logId) => (closed() ? quiet : reporter.logOpened(kind, logId)),
      builder: (endpoint, builders) => (closed() ? quiet : reporter.builder(endpoint, builders)),
      details: (details) => (closed() ? quiet : reporter.details(details)),
      resolved: (found) => (closed() ? quiet : reporter.resolved(found)),
    },
  };
}

export class BuildResource {
  readonly #registry: BuildRegistry;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #listeners: readonly BuildEndedListener[];
  /** The tenant its record names (docs/queue.md); undefined: the repository's owner. */
  readonly #tenant: string | undefined;
  readonly #controller = new AbortController();
  #state: ResourceState = 'new';
  #recording: BuildRecording | undefined;
  #bound = false;
  #id: string | undefined;
  #resolveId: (id: string | undefined) => void = () => undefined;
  /** The build's id once recorded or followed; undefined when it ended before either. */
  readonly id: Promise<string | undefined>;

  constructor(
    registry: BuildRegistry,
    logger: Pick<Logger, 'warn'>,
    listeners: readonly BuildEndedListener[],
    tenant?: string,
  ) {
    this.#registry = registry;
    this.#logger = logger;
    this.#listeners = listeners;
    this.#tenant = tenant;
    this.id = new Promise((resolve) => (this.#resolveId = resolve));
  }

  /** Aborted by `cancel`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The cancellation asked for, if any (DELETE /builds/{id}). */
  get cancelled(): Cancellation | undefined {
    return cancellationOf(this.#controller.signal.reason);
  }

  /** The id of the record this resource made or adopted; undefined before, or when it follows. O(1). */
  get recordId(): string | undefined {
    return this.#id;
  }

  /** Whether the record was made before this resource (a queued build). */
  get bound(): boolean {
    return this.#bound;
  }

  get reporter(): BuildReporter | undefined {
    return this.#recording?.reporter;
  }

  /** Records the build on its first job (later jobs of the same request keep the record). */
  async record(build: NewBuild): Promise<BuildReporter> {
    if (this.#recording === undefined) {
      const named = this.#tenant === undefined ? build : { ...build, tenant: this.#tenant };
      this.#recording = gated(await recordBuild(this.#registry, named, this.#logger), () => this.#handed);
      this.#id = this.#recording.id;
      if (this.#state === 'new') this.#state = 'recorded';
      this.#resolveId(this.#id);
    }
    return this.#recording.reporter;
  }

  /** The record of a queued build (recorded when it was queued): ended here, run or not. */
  bind(id: string): void {
    if (this.#state !== 'new') return;
    this.#recording = gated(recordingOf(this.#registry, id, this.#logger), () => this.#handed);
    this.#bound = true;
    this.#id = id;
    this.#state = 'recorded';
    this.#resolveId(id);
  }

  /** A queued build taken to run here: its record adopted (phase cloning); false when no longer queued. */
  async adopt(id: string): Promise<boolean> {
    if (!(await this.#registry.adopt(id))) return false;
    this.bind(id);
    return true;
  }

  /** The request follows the build `id` (an identical request in flight): no record of its own. */
  follow(id: string | undefined): void {
    if (this.#state !== 'new') return;
    this.#state = 'followed';
    this.#resolveId(id);
  }

  get #handed(): boolean {
    return this.#state === 'handed';
  }

  /**
   * Hands the build back to the shared queue (`handOver` its id: false when it could not); from
   * then on this resource reports and ends nothing of it. False when it owns no record.
   */
  async handBack(handOver: (id: string) => Promise<boolean>): Promise<boolean> {
    if (this.#state !== 'recorded' || this.#id === undefined) return false;
    if (!(await handOver(this.#id))) return false;
    this.#state = 'handed';
    return true;
  }

  cancel(by: string): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(new Cancellation('deleted', undefined, by));
  }

  /** Finishes the record with its answer, then awaits every ended listener. */
  async end(outcome: BuildOutcome): Promise<void> {
    // Handed back: another replica runs and ends it.
    if (this.#state === 'handed') return;
    const recording = this.#recording;
    const owned = this.#state === 'recorded';
    this.#state = 'ended';
    this.#resolveId(undefined);
    if (recording === undefined || !owned) return;
    await recording.finish(outcome);
    if (this.#listeners.length === 0 || this.#id === undefined) return;
    // A store away for a moment (a failover) must not drop the build's ended events.
    const id = this.#id;
    const record = await retryAfterDelays(() => this.#registry.get(id), {
      delaysMs: RECORD_READ_RETRIES_MS,
    }).catch((err: unknown) => {
      this.#logger.warn({ err, buildId: id }, 'the finished record could not be read: no ended listener ran');
      return undefined;
    });
    if (record === undefined) return;
    for (const listener of this.#listeners) {
      try {
        await listener(record);
      } catch (err) {
        this.#logger.warn({ err, buildId: this.#id }, 'a build-ended listener failed');
      }
    }
  }
}
