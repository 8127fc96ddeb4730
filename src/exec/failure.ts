/**
 * Every failure of a step (clone, build) that happens once the step's command log is open is
 * answered with that log's id: a failed command as the 500 of docs/errors.md
 * (`<command> <args...> exited with code <n>`), anything else as a 500 naming the step, its
 * reason written as the log's last line.
 */
import { reasonOf, serviceError, isServiceError, withLogId, type ServiceError } from '../errors/errors.js';
import type { CommandLogWriter } from '../logs/types.js';
import { CommandFailure, describeOutcome } from './run.js';

/** What to throw for `err`, raised inside `step` while `log` was open. Client errors (4xx) pass unchanged. */
export function stepFailure(
  err: unknown,
  step: string,
  log: Pick<CommandLogWriter, 'id' | 'write'>,
): unknown {
  if (err instanceof CommandFailure)
    return serviceError(
      'COMMAND_FAILED',
      { command: err.commandLine, outcome: describeOutcome(err.result) },
      { logId: log.id },
    );
  if (isServiceError(err)) {
    if (err.status < 500 || err.details.logId !== undefined) return err;
    log.write(`\n# ${err.message}\n`);
    return withLogId(err, log.id);
  }
  const reason: ServiceError = serviceError('STEP_FAILED', { step }, { logId: log.id, cause: err });
  log.write(`\n# ${reason.message}: ${reasonOf(err)}\n`);
  return reason;
}
