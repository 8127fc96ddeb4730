import test from 'ava';
import { sideBySide } from '../../../../src/logs/side-by-side.js';
import { memoryLog } from '../../../helpers/memory-log.js';

/** A point in one step that another step waits for: steps end in the order the test chooses. */
function milestone(): { reach: () => void; reached: Promise<void> } {
  let reach = (): void => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return { reach, reached };
}

test('steps run side by side; their output reaches the log in the order given, whatever order they end in', async (t) => {
  const log = memoryLog('git-test');
  const started: string[] = [];
  const fastEnded = milestone();
  const results = await sideBySide(log, [
    async (to) => {
      started.push('slow');
      to.write('$ slow\n');
      await fastEnded.reached;
      to.write('slow done\n');
      return 1;
    },
    async (to) => {
      started.push('fast');
      to.write('$ fast\nfast done\n');
      fastEnded.reach();
      return 'two';
    },
  ] as const);
  t.deepEqual(results, [1, 'two']);
  t.deepEqual(started, ['slow', 'fast'], 'the second started before the first ended');
  t.is(log.text(), '$ slow\nslow done\n$ fast\nfast done\n');
});

test('the first failure in the order given, once every step has ended and written', async (t) => {
  const log = memoryLog('git-test');
  let lastEnded = false;
  const threeFailed = milestone();
  const twoFailed = milestone();
  const error = await t.throwsAsync(
    sideBySide(log, [
      async (to) => {
        to.write('one\n');
        return 1;
      },
      async (to) => {
        await threeFailed.reached;
        to.write('two failed\n');
        twoFailed.reach();
        throw new Error('two');
      },
      async (to) => {
        to.write('three failed\n');
        threeFailed.reach();
        throw new Error('three');
      },
      async (to) => {
        await twoFailed.reached;
        to.write('four\n');
        lastEnded = true;
      },
    ] as const),
  );
  t.is(error?.message, 'two');
  t.true(lastEnded);
  t.is(log.text(), 'one\ntwo failed\nthree failed\nfour\n');
});
