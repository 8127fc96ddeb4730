/**
 * The 429 and 503 schedule: wait what the server's Retry-After says, plus a little jitter (so jobs
 * told the same number do not all come back at the same instant), never less; give up when the next
 * try would start after the deadline (--timeout). Pure: the clock and the randomness are passed in.
 * Only 429 and 503 are waited on: a 401 or 403 (no token, a bad one, no right) would be answered the
 * same again, so it ends ibs at once (exit 2, exit-codes.ts).
 */

/** Used when a 429 carries no usable Retry-After (docs/openapi.yaml: 30 without history). */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;
/** Used for a 503 without one (a build's answer read from its record): the shared store's 10 s. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 10;

/** Seconds from a Retry-After header: delta-seconds, or an HTTP date relative to `nowMs`. */
export function retryAfterSeconds(
  header: string | undefined,
  nowMs: number,
  fallback = DEFAULT_RETRY_AFTER_SECONDS,
): number {
  const text = header?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (text !== '' && !Number.isNaN(date)) return Math.max(0, Math.ceil((date - nowMs) / 1000));
  return fallback;
}

/** Jitter added to a wait: up to 10 % of it, between 0.25 s and 10 s at most. */
export function jitterMs(retryAfterS: number, random: () => number): number {
  const span = Math.min(10_000, Math.max(250, retryAfterS * 100));
  return Math.round(random() * span);
}

export type RetryDecision =
  { readonly retry: true; readonly waitMs: number } | { readonly retry: false; readonly waitMs: number };

/** Whether to wait and try again: only when the try after the wait starts before `deadlineMs`. */
export function planRetry(
  retryAfterS: number,
  nowMs: number,
  deadlineMs: number,
  random: () => number,
): RetryDecision {
  const waitMs = retryAfterS * 1000 + jitterMs(retryAfterS, random);
  return { retry: nowMs + waitMs < deadlineMs, waitMs };
}
