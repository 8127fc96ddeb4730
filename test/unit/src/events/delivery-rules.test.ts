// The pure rules of event delivery: Standard Webhooks signatures (checked with the published
// package), the verdict table, the retry schedule with its jitter, the purl of an image.
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { signedHeaders } from '../../../../src/events/signing.js';
import { retryAfterMs, verdictOf } from '../../../../src/events/outcome.js';
import { retryDelayMs } from '../../../../src/events/schedule.js';
import { ociPurl } from '../../../../src/events/purl.js';

const secret = (n: number): string => `whsec_${Buffer.alloc(32, n).toString('base64')}`;

test('each secret of a rotation signs: a receiver knowing any one verifies', (t) => {
  const body = JSON.stringify({ id: 'e1', type: 'x' });
  const headers = signedHeaders([secret(1), secret(2)], 'e1', body);
  t.is(headers['webhook-signature'].split(' ').length, 2);
  t.notThrows(() => new Webhook(secret(1)).verify(body, { ...headers }));
  t.notThrows(() => new Webhook(secret(2)).verify(body, { ...headers }));
  t.throws(() => new Webhook(secret(3)).verify(body, { ...headers }));
  t.throws(() => new Webhook(secret(1)).verify(`${body} `, { ...headers }));
});

test('the verdict table: 2xx delivered, 410 disables, 429/503 wait their Retry-After, others retry', (t) => {
  const cases: [Parameters<typeof verdictOf>[0], ReturnType<typeof verdictOf>][] = [
    [{ kind: 'status', status: 200 }, { next: 'delivered' }],
    [{ kind: 'status', status: 204 }, { next: 'delivered' }],
    [{ kind: 'status', status: 410 }, { next: 'disable' }],
    [
      { kind: 'status', status: 429, retryAfter: '7' },
      { next: 'retry', waitMs: 7000 },
    ],
    [
      { kind: 'status', status: 503, retryAfter: '0' },
      { next: 'retry', waitMs: 0 },
    ],
    [{ kind: 'status', status: 503 }, { next: 'retry' }],
    [{ kind: 'status', status: 500, retryAfter: '7' }, { next: 'retry' }],
    [{ kind: 'status', status: 301 }, { next: 'retry' }],
    [{ kind: 'status', status: 404 }, { next: 'retry' }],
    [{ kind: 'timeout' }, { next: 'retry' }],
    [{ kind: 'unreachable' }, { next: 'retry' }],
  ];
  for (const [answer, verdict] of cases) t.deepEqual(verdictOf(answer), verdict, JSON.stringify(answer));
});

test('Retry-After as an HTTP date', (t) => {
  const now = Date.parse('2026-11-26T10:00:00Z');
  t.is(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now), 30_000);
  t.is(retryAfterMs('soon', now), undefined);
});

test('the schedule: each delay with at most 10 % jitter, then none left', (t) => {
  const schedule = [5, 300];
  t.is(
    retryDelayMs(1, schedule, () => 0),
    5000,
  );
  t.is(
    retryDelayMs(1, schedule, () => 0.999),
    5500,
  );
  t.is(
    retryDelayMs(2, schedule, () => 0.5),
    315_000,
  );
  t.is(
    retryDelayMs(3, schedule, () => 0.5),
    undefined,
  );
});

test('an image as a purl of type oci', (t) => {
  t.is(
    ociPurl({ registry: 'reg.example:5000', name: 'team/App', digest: 'sha256:ab', tag: 'v1' }),
    'pkg:oci/app@sha256%3Aab?repository_url=reg.example:5000/team/App&tag=v1',
  );
});
