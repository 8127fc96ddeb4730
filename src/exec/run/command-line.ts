/**
 * How a command is shown (secrets masked) and how its outcome is told; the argv rule: a known
 * secret never reaches argv (checked before anything starts).
 */
import { maskSecrets, secretVariants } from '../../secrets/masking.js';
import { shellWord } from '../../rules/shell-quote.js';
import type { CommandResult, Display } from './types.js';

/** A command ran (or tried to) and did not succeed. */
export class CommandFailure extends Error {
  readonly result: CommandResult;
  /** The command line with secrets masked, as error bodies show it. */
  readonly commandLine: string;
  constructor(result: CommandResult, displayLine: string) {
    super(`${displayLine} ${describeOutcome(result)}`);
    this.name = 'CommandFailure';
    this.result = result;
    this.commandLine = displayLine;
  }
}

/** `exited with code 128`, `timed out after 5 s`, ... (pure). */
export function describeOutcome(result: CommandResult): string {
  if (result.timedOut) return `timed out after ${result.timeoutSeconds ?? 0} s`;
  if (result.aborted)
    return result.cancelledBecause === undefined ? 'was aborted' : `was ${result.cancelledBecause}`;
  if (result.spawnError !== undefined) return `could not be started (${result.spawnError})`;
  if (result.exitCode !== null) return `exited with code ${result.exitCode}`;
  return `was killed by ${result.signal ?? 'a signal'}`;
}

/** `git clone --depth 1 -- URL DIR`: the command line for messages, secrets masked (pure). */
export function commandLine(
  command: string,
  args: readonly string[],
  secrets: readonly string[] = [],
): string {
  return maskSecrets([command, ...args].map(shellWord).join(' '), secretVariants(secrets));
}

/**
 * Secrets at least this long are refused in argv. Shorter ones are not checked: they could
 * match an unrelated argument (a path, a uuid) and fail a legitimate build.
 */
const MIN_CHECKED_SECRET_LENGTH = 8;

export function secretInArgv(command: string, args: readonly string[], secrets: readonly string[]): boolean {
  return secrets.some(
    (secret) =>
      secret.length >= MIN_CHECKED_SECRET_LENGTH && [command, ...args].some((arg) => arg.includes(secret)),
  );
}

/** A programming error, never a user error: thrown before anything starts. */
export function argvRefusal(command: string): Error {
  return new Error(`refusing to run ${command}: a secret would appear in its argv`);
}

export function checkArgv(command: string, args: readonly string[], secrets: readonly string[]): void {
  if (secretInArgv(command, args, secrets)) throw argvRefusal(command);
}

/** The command line of `shown` (its args checked like argv, since they are printed). */
export function checkedLine(shown: Display, secrets: readonly string[]): string {
  checkArgv(shown.command, shown.args, secrets);
  return commandLine(shown.command, shown.args, secrets);
}
