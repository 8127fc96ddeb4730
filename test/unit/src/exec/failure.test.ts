import test from 'ava';
import { serviceError, isServiceError } from '../../../../src/errors/errors.js';
import { stepFailure } from '../../../../src/exec/failure.js';
import { CommandFailure } from '../../../../src/exec/run.js';

function fakeLog(): { id: string; write: (chunk: string | Uint8Array) => void; text: () => string } {
  let text = '';
  return { id: 'git-0000', write: (chunk) => (text += String(chunk)), text: () => text };
}

test('a failed command becomes the contract 500 naming the command and its exit code, with the log id', (t) => {
  const log = fakeLog();
  const failure = new CommandFailure(
    {
      command: 'git',
      args: [],
      exitCode: 128,
      signal: null,
      timedOut: false,
      aborted: false,
      durationMs: 1,
      stdout: '',
    },
    'git clone -- https://h/x /tmp/c',
  );
  const err = stepFailure(failure, 'git clone', log);
  t.true(isServiceError(err));
  if (!isServiceError(err)) return;
  t.is(err.status, 500);
  t.deepEqual(err.toBody(), {
    error: 'git clone -- https://h/x /tmp/c exited with code 128',
    logId: 'git-0000',
  });
});

test('any other failure becomes a 500 naming the step, with the log id; the log says why', (t) => {
  const log = fakeLog();
  const cause = new Error('EACCES: permission denied');
  const err = stepFailure(cause, 'git clone', log);
  t.true(isServiceError(err));
  if (!isServiceError(err)) return;
  t.is(err.code, 'STEP_FAILED');
  t.deepEqual(err.toBody(), { error: 'git clone failed', logId: 'git-0000' });
  t.is(err.cause, cause);
  t.true(log.text().includes('# git clone failed: EACCES: permission denied\n'));
});

test('a 500 ServiceError raised in the step gets the log id; client errors pass unchanged', (t) => {
  const log = fakeLog();
  const err = stepFailure(
    serviceError('COMMAND_OUTPUT_UNEXPECTED', { command: 'git rev-parse HEAD' }),
    'git clone',
    log,
  );
  t.true(isServiceError(err) && err.code === 'COMMAND_OUTPUT_UNEXPECTED');
  t.deepEqual(isServiceError(err) && err.toBody(), {
    error: 'git rev-parse HEAD printed unexpected output',
    logId: 'git-0000',
  });
  const clientError = serviceError('INVALID_FIELDS');
  t.is(stepFailure(clientError, 'git clone', log), clientError);
});
