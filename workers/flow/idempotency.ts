/**
 * Idempotency-Key (docs/behaviour.md): a request whose key an earlier request reserved attaches to
 * that request's build (same body) or is refused (another body, 422). The key is bound to the
 * build's id once it is admitted, and freed when the build was refused.
 */
import type { BuildAnswer, BuildRecord, BuildRegistry } from '../../src/builds/types.js';
import { serviceError } from '../../src/errors/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';
import { countAttached } from './answer.js';

/** How long a request waits for the build id of an earlier request with its key being admitted. */
const ATTACH_WAIT_MS = 10_000;
/** One long poll of an attached request's wait. */
const ATTACHED_POLL_MS = 60_000;

/** An Idempotency-Key and the digest of the body it came with (never the body). */
export interface Idempotency {
  readonly key: string;
  readonly digest: string;
}

export class IdempotentRequests {
  constructor(
    private readonly builds: BuildRegistry,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * The id of the build an earlier request with the same key and body started, or undefined when
   * the key is new (it is then reserved, to be bound by `bind`). The same key with another body
   * is a 422.
   */
  async attach(idempotency: Idempotency): Promise<string | undefined> {
    const deadline = Date.now() + ATTACH_WAIT_MS;
    for (;;) {
      const held = await this.builds.reserveKey(idempotency.key, idempotency.digest);
      if (held.kind === 'reserved') return undefined;
      if (!held.sameBody) throw serviceError('IDEMPOTENCY_KEY_REUSED');
      if (held.buildId !== undefined) return held.buildId;
      // The first request is being admitted: its build's id comes within moments.
      if (Date.now() > deadline) throw serviceError('STORE_UNAVAILABLE');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * The answer of the build `id` for a request attached to it, waited for (a POST is counted in
   * service_builds_total once answered, as every POST is).
   */
  async answerOf(id: string, signal?: AbortSignal): Promise<BuildAnswer> {
    for (;;) {
      const record = await this.builds.waitFinished(id, ATTACHED_POLL_MS, signal);
      if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
      if (record.answer !== undefined) {
        countAttached(this.metrics, record.answer, record.durationSeconds);
        return record.answer;
      }
      if (signal?.aborted === true) throw signal.reason;
    }
  }

  /** The record of the build `id` for an async request attached to it (counted once it is answered). */
  async attached(id: string): Promise<BuildRecord> {
    const record = await this.builds.get(id);
    if (record === undefined) throw serviceError('BUILD_NOT_FOUND', { id });
    void this.answerOf(id).catch(() => undefined);
    return record;
  }

  /** Binds a reserved key to the build's id once admitted; frees it when the build was refused. */
  async bind(idempotency: Idempotency, buildId: Promise<string | undefined>): Promise<void> {
    const id = await buildId;
    try {
      if (id === undefined) await this.builds.releaseKey(idempotency.key);
      else await this.builds.bindKey(idempotency.key, id);
    } catch (err) {
      this.logger.warn({ err, buildId: id }, 'could not record the idempotency key');
    }
  }
}
