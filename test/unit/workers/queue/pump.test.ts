// The pump that takes queued builds into free slots: one pass at a time, a kick during a pass runs
// exactly one more pass, a stopped pump runs none, a failing step is reported and the pump goes on.
import test from 'ava';
import { Pump } from '../../../../workers/queue/pump.js';
import { eventually } from '../../../helpers/eventually.js';

test('kicks during a pass make one more pass, never two side by side', async (t) => {
  let running = 0;
  let most = 0;
  let passes = 0;
  let release: () => void = () => undefined;
  const pump = new Pump(
    async () => {
      running += 1;
      most = Math.max(most, running);
      passes += 1;
      if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      running -= 1;
      return false;
    },
    (err) => t.fail(String(err)),
  );
  pump.kick();
  pump.kick();
  pump.kick();
  release();
  await eventually(async () => passes === 2, { interval: 5, what: 'the second pass' });
  await new Promise((resolve) => setImmediate(resolve));
  t.is(passes, 2);
  t.is(most, 1);
});

test('a step that did something runs again at once; a stopped pump takes nothing more', async (t) => {
  let left = 3;
  const pump = new Pump(
    async () => (left -= 1) > 0,
    (err) => t.fail(String(err)),
  );
  pump.kick();
  await eventually(async () => left === 0, { interval: 5, what: 'three steps' });
  pump.stop();
  pump.kick();
  await new Promise((resolve) => setImmediate(resolve));
  t.is(left, 0);
});

test('a failing step is reported, and the next kick runs again', async (t) => {
  const failures: unknown[] = [];
  let calls = 0;
  const pump = new Pump(
    async () => {
      calls += 1;
      if (calls === 1) throw new Error('redis away');
      return false;
    },
    (err) => failures.push(err),
  );
  pump.kick();
  await eventually(async () => failures.length === 1, { interval: 5, what: 'the failure reported' });
  pump.kick();
  await eventually(async () => calls === 2, { interval: 5, what: 'the next pass' });
  t.is(failures.length, 1);
});
