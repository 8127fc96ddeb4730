/**
 * A call that fails for a moment (a store restarting, a registry briefly unavailable) is tried
 * again after set delays, one wait before each new try, until it succeeds, the delays run out, its
 * failure is not one to retry, or the signal ends the waiting: then its last failure is thrown.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** The wait before each new try, in order: the call is tried once more than there are delays. */
  readonly delaysMs: readonly number[];
  /** Ends the retrying at once, even mid-wait: the last failure is thrown. */
  readonly signal?: AbortSignal;
  /** Whether a failure is worth another try (default: every failure is). */
  readonly retries?: (err: unknown) => boolean;
  /** Told of each failure about to be tried again: its try (0 first) and the wait before the next. */
  readonly onRetry?: (err: unknown, attempt: number, waitMs: number) => void;
}

const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/** The result of `call`, tried again after each of `delaysMs` while it fails. */
export async function retryAfterDelays<T>(
  call: (attempt: number) => Promise<T>,
  { delaysMs, signal, retries = () => true, onRetry }: RetryOptions,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call(attempt);
    } catch (err) {
      const waitMs = delaysMs[attempt];
      if (waitMs === undefined || aborted(signal) || !retries(err)) throw err;
      onRetry?.(err, attempt, waitMs);
      await sleep(waitMs, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
      // Aborted mid-wait: no new try.
      if (aborted(signal)) throw err;
    }
  }
}
