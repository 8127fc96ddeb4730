// A call retried after set delays: how many tries, which failure is thrown, which failures are not
// retried, and an abort that ends a long wait at once.
import test from 'ava';
import { retryAfterDelays } from '../../../../src/errors/retry.js';

/** A call that fails its first `failures` tries (each with its own error), then answers its try. */
function failingCall(failures: number): { call: (attempt: number) => Promise<number>; tries: number[] } {
  const tries: number[] = [];
  const call = async (attempt: number): Promise<number> => {
    tries.push(attempt);
    if (tries.length <= failures) throw new Error(`failure ${tries.length}`);
    return attempt;
  };
  return { call, tries };
}

test('a call that succeeds at once is tried once, with no wait', async (t) => {
  const { call, tries } = failingCall(0);
  const waits: number[] = [];
  t.is(await retryAfterDelays(call, { delaysMs: [1, 1], onRetry: (_err, _n, ms) => waits.push(ms) }), 0);
  t.deepEqual(tries, [0]);
  t.deepEqual(waits, []);
});

test('a failing call is tried again after each delay until it succeeds', async (t) => {
  const { call, tries } = failingCall(2);
  const retried: [string, number, number][] = [];
  const result = await retryAfterDelays(call, {
    delaysMs: [1, 2, 3],
    onRetry: (err, attempt, waitMs) => retried.push([(err as Error).message, attempt, waitMs]),
  });
  t.is(result, 2);
  t.deepEqual(tries, [0, 1, 2]);
  t.deepEqual(retried, [
    ['failure 1', 0, 1],
    ['failure 2', 1, 2],
  ]);
});

test('once the delays run out, the last failure is thrown: one try more than delays', async (t) => {
  const { call, tries } = failingCall(Infinity);
  const err = await t.throwsAsync(retryAfterDelays(call, { delaysMs: [1, 1, 1] }));
  t.is(err?.message, 'failure 4');
  t.deepEqual(tries, [0, 1, 2, 3]);
});

test('a failure the predicate does not retry is thrown at once', async (t) => {
  const { call, tries } = failingCall(Infinity);
  const err = await t.throwsAsync(
    retryAfterDelays(call, {
      delaysMs: [1, 1],
      retries: (failure) => (failure as Error).message !== 'failure 2',
    }),
  );
  t.is(err?.message, 'failure 2');
  t.deepEqual(tries, [0, 1]);
});

test('an abort during a wait ends it at once and throws the last failure, with no new try', async (t) => {
  const { call, tries } = failingCall(Infinity);
  const stop = new AbortController();
  // An hour's wait: only the abort can end it within the test's time limit.
  const retrying = retryAfterDelays(call, {
    delaysMs: [3_600_000],
    signal: stop.signal,
    onRetry: () => stop.abort(),
  });
  const err = await t.throwsAsync(retrying);
  t.is(err?.message, 'failure 1');
  t.deepEqual(tries, [0]);
});

test('a signal already aborted stops after the first failure', async (t) => {
  const { call, tries } = failingCall(Infinity);
  const waits: number[] = [];
  const err = await t.throwsAsync(
    retryAfterDelays(call, {
      delaysMs: [1, 1],
      signal: AbortSignal.abort(),
      onRetry: (_e, _n, ms) => waits.push(ms),
    }),
  );
  t.is(err?.message, 'failure 1');
  t.deepEqual(tries, [0]);
  t.deepEqual(waits, []);
});
