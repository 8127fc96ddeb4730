/**
 * Idempotency-Key (docs/behaviour.md): a request whose key an earlier request reserved attaches to
 * that request's build (same body) or is refused (another body, 422). The key is bound to the
 * build's id once it is admitted, and freed when the build was refused or could not be recorded.
 */
import { randomUUID } from 'node:crypto';
import type { BuildAnswer, BuildRecord, BuildRegistry } from '../../src/builds/types.js';
import { serviceError } from '../../src/errors/errors.js';
import { retryAfterDelays } from '../../src/errors/retry.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Metrics } from '../../src/observability/metrics.js';
import { countAttached } from './answer.js';

/** How long a request waits for the build id of an earlier request with its key being admitted. */
const ATTACH_WAIT_MS = 10_000;
/** One long poll of an attached request's wait. */
const ATTACHED_POLL_MS = 60_000;
/**
 * A reservation whose build could not be recorded (the store failing over, at maxmemory) is freed
 * as soon as the store answers again, tried every half second for as long as the reservation lasts
 * (30 s): the caller's retry with the key then starts the build, not waiting out the reservation.
 */
const RELEASE_RETRIES_MS: readonly number[] = Array.from({ length: 60 }, () => 500);

/** An Idempotency-Key and the digest of the body it came with (never the body). */
export interface Idempotency {
  readonly key: string;
  readonly digest: string;
}

/** A key this request reserved: `token` lets only it free the reservation. */
export interface HeldKey extends Idempotency {
  readonly token: string;
}

/** An earlier request's build this one attaches to, or the key it now holds. */
export type Attachment = { readonly attachedTo: string } | { readonly held: HeldKey };

export class IdempotentRequests {
  constructor(
    private readonly builds: BuildRegistry,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * The build an earlier request with the same key and body started, or the key, new, now held by
   * this request (to be bound by `bind`). The same key with another body is a 422.
   */
  async attach(idempotency: Idempotency): Promise<Attachment> {
    const deadline = Date.now() + ATTACH_WAIT_MS;
    for (;;) {
      const mine: HeldKey = { ...idempotency, token: randomUUID() };
      const held = await this.builds.reserveKey(mine.key, mine.digest, mine.token).catch((err: unknown) => {
        // The reservation may have landed with its answer lost (a failover): freed once the store answers.
        this.releaseSoon(mine);
        throw err;
      });
      if (held.kind === 'reserved') return { held: mine };
      if (!held.sameBody) throw serviceError('IDEMPOTENCY_KEY_REUSED');
      if (held.buildId !== undefined) return { attachedTo: held.buildId };
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

  /**
   * Frees a held key whose request recorded no build, in the background, retried until the store
   * answers (RELEASE_RETRIES_MS): a late try frees nothing a later request holds.
   */
  releaseSoon(held: HeldKey): void {
    void retryAfterDelays(() => this.builds.releaseKey(held.key, held.token), {
      delaysMs: RELEASE_RETRIES_MS,
    }).catch((err: unknown) => this.logger.warn({ err }, 'could not free the idempotency key'));
  }

  /** Binds a held key to the build's id once admitted; frees it when the build was refused. */
  async bind(held: HeldKey, buildId: Promise<string | undefined>): Promise<void> {
    const id = await buildId;
    try {
      if (id === undefined) await this.builds.releaseKey(held.key, held.token);
      else await this.builds.bindKey(held.key, id);
    } catch (err) {
      this.logger.warn({ err, buildId: id }, 'could not record the idempotency key');
    }
  }
}
