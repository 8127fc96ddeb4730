import test from 'ava';
import {
  DEFAULT_RETRY_AFTER_SECONDS,
  jitterMs,
  planRetry,
  retryAfterSeconds,
} from '../../../../src/client/retry.js';

test('Retry-After: seconds, an HTTP date, or the default when missing or unreadable', (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.is(retryAfterSeconds('12', now), 12);
  t.is(retryAfterSeconds(' 0 ', now), 0);
  t.is(retryAfterSeconds('Thu, 01 Jan 2026 00:00:45 GMT', now), 45);
  t.is(retryAfterSeconds('Wed, 31 Dec 2025 23:00:00 GMT', now), 0);
  t.is(retryAfterSeconds(undefined, now), DEFAULT_RETRY_AFTER_SECONDS);
  t.is(retryAfterSeconds('soon', now), DEFAULT_RETRY_AFTER_SECONDS);
});

test('jitter is only ever added: 0 to 10 % of the wait, at least a 0.25 s span, at most 10 s', (t) => {
  t.is(
    jitterMs(30, () => 0),
    0,
  );
  t.is(
    jitterMs(30, () => 1),
    3000,
  );
  t.is(
    jitterMs(1, () => 1),
    250,
  );
  t.is(
    jitterMs(300, () => 1),
    10_000,
  );
});

test('the schedule waits Retry-After plus jitter while the next try starts before the deadline', (t) => {
  const half = () => 0.5;
  t.deepEqual(planRetry(30, 0, 60_000, half), { retry: true, waitMs: 31_500 });
  t.deepEqual(planRetry(30, 30_000, 60_000, half), { retry: false, waitMs: 31_500 });
  t.deepEqual(
    planRetry(5, 0, 5_000, () => 0),
    { retry: false, waitMs: 5_000 },
  );
});
