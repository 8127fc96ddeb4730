/** Turns a failed command into the contract's 500 (`<command> <args...> exited with code <n>` + logId). */
import { commandFailed, type ServiceError } from '../errors.js';
import { CommandFailure, describeOutcome } from './run.js';

/** Rethrows `err` as COMMAND_FAILED with `logId` when it is a CommandFailure; anything else unchanged. */
export function asCommandFailed(err: unknown, logId: string): ServiceError | unknown {
  if (err instanceof CommandFailure)
    return commandFailed(err.commandLine, describeOutcome(err.result), logId);
  return err;
}
