/**
 * The one periodic runner (src/schedules.ts): only the lock's holder runs passes; on taking the lock
 * the at-once passes run and the others wait one interval; a slow pass holds back its own lane only;
 * stopping waits for the pass in flight and lets the lock go.
 */
import test from 'ava';
import type { ScheduledPass, ScheduleLock } from '../../../src/prebuilds/schedule-lock.js';
import { PeriodicRunner } from '../../../src/schedules.js';
import { eventually } from '../../helpers/eventually.js';
import { silentLogger } from '../../helpers/silent-logger.js';

function lock(held: { value: boolean }): ScheduleLock & { released: number } {
  const state = {
    released: 0,
    hold: () => Promise.resolve(held.value),
    release: () => {
      state.released += 1;
      return Promise.resolve();
    },
  };
  return state;
}

/** A pass whose runs are counted and which, while `gate` is set, waits for it. */
function pass(name: string, lane: string, atOnce: boolean, intervalMs = 60_000) {
  const state = { runs: 0, gate: undefined as Promise<void> | undefined };
  const scheduled: ScheduledPass = {
    name,
    lane,
    atOnce,
    intervalMs,
    run: async () => {
      state.runs += 1;
      await state.gate;
    },
  };
  return { state, scheduled };
}

test('only the holder runs passes; taking the lock runs the at-once passes, the others an interval later', async (t) => {
  const held = { value: false };
  const reconcile = pass('reconcile', 'prebuilds', true);
  const retention = pass('retention', 'retention', false, 40);
  const runner = new PeriodicRunner(lock(held), [reconcile.scheduled, retention.scheduled], silentLogger());
  await runner.tick();
  t.is(reconcile.state.runs, 0, 'not held: nothing runs');
  held.value = true;
  await runner.tick();
  t.is(reconcile.state.runs, 1);
  t.is(retention.state.runs, 0, 'retention waits one interval after taking the lock');
  await runner.tick();
  t.is(reconcile.state.runs, 1, 'not due again before its interval');
  await eventually(async () => {
    await runner.tick();
    return retention.state.runs === 1;
  });
  await runner.stop();
});

test('a slow pass holds back its own lane only; stop waits for it and lets the lock go', async (t) => {
  const held = { value: true };
  const schedule = lock(held);
  const reconcile = pass('reconcile', 'prebuilds', true);
  const refresh = pass('refresh', 'prebuilds', true);
  const retention = pass('retention', 'retention', false, 1);
  let open = (): void => undefined;
  reconcile.state.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const runner = new PeriodicRunner(
    schedule,
    [reconcile.scheduled, refresh.scheduled, retention.scheduled],
    silentLogger(),
  );
  void runner.tick();
  await eventually(async () => {
    void runner.tick();
    return retention.state.runs >= 1;
  });
  t.is(reconcile.state.runs, 1);
  t.is(refresh.state.runs, 0, 'refresh waits for the reconcile of its lane');
  let stopped = false;
  const stopping = runner.stop().then(() => {
    stopped = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.false(stopped, 'stop waits for the pass in flight');
  open();
  await stopping;
  t.is(schedule.released, 1);
  t.is(refresh.state.runs, 0, 'no new pass once stopping');
});
