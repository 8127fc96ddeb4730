// The tests' one poll helper: the first value that is neither undefined nor false, a failure naming
// what it waited for (and the state then) after the timeout, and a check's own error at once.
import test from 'ava';
import { eventually } from '../../helpers/eventually.js';

test('answers the first value that is neither undefined nor false', async (t) => {
  let n = 0;
  const value = await eventually(() => (++n < 3 ? false : n === 3 ? undefined : { n }), { interval: 1 });
  t.deepEqual(value, { n: 4 });
  t.is(await eventually(async () => 0), 0, '0 is a value');
});

test('fails after the timeout naming what it waited for, asked at that moment', async (t) => {
  let last = 0;
  const error = await t.throwsAsync(
    eventually(() => ++last > 1e9, { timeout: 50, interval: 5, what: () => `a big number (last ${last})` }),
  );
  t.is(error?.message, `timed out after 50 ms waiting for a big number (last ${last})`);
});

test("a check's own error ends the wait at once", async (t) => {
  const started = Date.now();
  await t.throwsAsync(
    eventually(
      () => {
        throw new Error('the process exited');
      },
      { timeout: 60_000 },
    ),
    { message: 'the process exited' },
  );
  t.true(Date.now() - started < 30_000); // not the 60 s timeout
});
