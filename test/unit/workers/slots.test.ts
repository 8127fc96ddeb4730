import test from 'ava';
import { ServiceError } from '../../../src/errors/errors.js';
import { Cancellation } from '../../../src/exec/cancellation.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { createBuildQueue } from '../../../workers/queue/slots.js';

/** A job that stays running until release() is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

async function gaugeValue(gauge: Metrics['buildsInFlight']): Promise<number> {
  return (await gauge.get()).values[0]?.value ?? NaN;
}

test('a burst of N with limit k admits exactly k; the rest are refused with busy (429, Retry-After 30)', async (t) => {
  const metrics = new Metrics();
  const queue = createBuildQueue({ maxConcurrent: 3, shutdownSignal: new AbortController().signal, metrics });
  t.is(await gaugeValue(metrics.buildsCapacity), 3);
  const g = gate();
  let started = 0;
  const admitted: Promise<string>[] = [];
  const refused: unknown[] = [];
  for (let i = 0; i < 10; i++) {
    try {
      admitted.push(
        queue.run(async () => {
          started += 1;
          await g.done;
          return `job-${i}`;
        }),
      );
    } catch (err) {
      refused.push(err);
    }
  }
  t.is(admitted.length, 3);
  t.is(refused.length, 7);
  for (const err of refused) {
    t.true(err instanceof ServiceError);
    const e = err as ServiceError;
    t.is(e.status, 429);
    t.is(e.code, 'BUSY');
    t.deepEqual(e.toBody(), { error: 'already running 3 builds, the maximum; retry later' });
    t.deepEqual(e.details.headers, { 'Retry-After': '30' });
  }
  await new Promise((resolve) => setImmediate(resolve));
  t.is(started, 3, 'admitted jobs start at once, none waits');
  t.is(queue.inFlight, 3);
  t.is(await gaugeValue(metrics.buildsInFlight), 3);

  g.release();
  t.deepEqual(await Promise.all(admitted), ['job-0', 'job-1', 'job-2']);
  t.is(queue.inFlight, 0);
  t.is(await gaugeValue(metrics.buildsInFlight), 0);

  // Slots are free again: a second burst admits k again.
  const g2 = gate();
  const again = [0, 1, 2].map(() => queue.run(() => g2.done));
  t.throws(() => queue.run(() => g2.done), { instanceOf: ServiceError });
  g2.release();
  await Promise.all(again);
  t.is(queue.inFlight, 0);
});

test('capacity is released on every path: resolve, reject, synchronous throw', async (t) => {
  const queue = createBuildQueue({ maxConcurrent: 1, shutdownSignal: new AbortController().signal });
  t.is(await queue.run(() => Promise.resolve(1)), 1);
  t.is(queue.inFlight, 0);
  await t.throwsAsync(() => queue.run(() => Promise.reject(new Error('boom'))), { message: 'boom' });
  t.is(queue.inFlight, 0);
  await t.throwsAsync(
    () =>
      queue.run(() => {
        throw new ServiceError('NO_DEFINITION', 'no definition');
      }),
    { message: 'no definition' },
  );
  t.is(queue.inFlight, 0);
  // Still exactly one slot.
  const g = gate();
  const running = queue.run(() => g.done);
  t.throws(() => queue.run(() => g.done), { instanceOf: ServiceError });
  g.release();
  await running;
  t.is(await queue.run(() => Promise.resolve('free')), 'free');
});

test('maxConcurrent 0 means no limit', async (t) => {
  const metrics = new Metrics();
  const queue = createBuildQueue({ maxConcurrent: 0, shutdownSignal: new AbortController().signal, metrics });
  t.is(queue.capacity, 0);
  t.is(await gaugeValue(metrics.buildsCapacity), 0);
  const g = gate();
  const jobs = Array.from({ length: 50 }, () => queue.run(() => g.done));
  t.is(queue.inFlight, 50);
  g.release();
  await Promise.all(jobs);
  t.is(queue.inFlight, 0);
});

test('each job gets its own signal, aborted when the process must stop now', async (t) => {
  const shutdown = new AbortController();
  const queue = createBuildQueue({ maxConcurrent: 2, shutdownSignal: shutdown.signal });
  const signals: AbortSignal[] = [];
  const jobs = [0, 1].map(() =>
    queue.run(
      (signal) =>
        new Promise<string>((resolve) => {
          signals.push(signal);
          signal.addEventListener('abort', () => resolve('aborted'));
        }),
    ),
  );
  await new Promise((resolve) => setImmediate(resolve));
  t.is(signals.length, 2);
  t.not(signals[0], signals[1]);
  t.false(signals.some((s) => s.aborted));
  shutdown.abort(new Error('shutdown'));
  t.deepEqual(await Promise.all(jobs), ['aborted', 'aborted']);
  t.is(queue.inFlight, 0);
  // A job admitted after the shutdown starts with an aborted signal.
  t.true(await queue.run((signal) => Promise.resolve(signal.aborted)));
});

test('a finished job signal is not aborted later by a shutdown', async (t) => {
  const shutdown = new AbortController();
  const queue = createBuildQueue({ maxConcurrent: 1, shutdownSignal: shutdown.signal });
  let kept: AbortSignal | undefined;
  await queue.run((signal) => {
    kept = signal;
    return Promise.resolve();
  });
  shutdown.abort();
  t.false(kept?.aborted);
});

test('the job deadline aborts the job signal with a deadline Cancellation; the slot stays held until the job settles', async (t) => {
  const queue = createBuildQueue({ maxConcurrent: 1, shutdownSignal: new AbortController().signal });
  const g = gate();
  let seen!: (reason: unknown) => void;
  const abortSeen = new Promise<unknown>((resolve) => (seen = resolve));
  const job = queue.run(
    async (signal) => {
      signal.addEventListener('abort', () => seen(signal.reason));
      // The job cleans up for a while after the abort (its processes ending): it still holds its slot.
      await g.done;
      return 'settled';
    },
    { deadlineSeconds: 0.05 },
  );
  const reason = await abortSeen;
  t.true(reason instanceof Cancellation);
  t.is((reason as Cancellation).kind, 'deadline');
  t.regex((reason as Cancellation).message, /job deadline \(0\.05 s/);
  t.is(queue.inFlight, 1);
  t.throws(() => queue.run(() => Promise.resolve()), { instanceOf: ServiceError });
  g.release();
  t.is(await job, 'settled');
  t.is(queue.inFlight, 0);
});

test("the caller's signal cancels its own job only", async (t) => {
  const queue = createBuildQueue({ maxConcurrent: 2, shutdownSignal: new AbortController().signal });
  const client = new AbortController();
  const untilAborted = (signal: AbortSignal) =>
    new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
  const g = gate();
  let other: AbortSignal | undefined;
  const mine = queue.run(untilAborted, { signal: client.signal });
  const theirs = queue.run((signal) => {
    other = signal;
    return g.done;
  });
  client.abort(new Cancellation('client_gone'));
  const reason = await mine;
  t.true(reason instanceof Cancellation);
  t.is((reason as Cancellation).kind, 'client_gone');
  t.false(other?.aborted);
  t.is(queue.inFlight, 1);
  g.release();
  await theirs;
  t.is(queue.inFlight, 0);
});
