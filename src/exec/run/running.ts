/**
 * A started command: its process (start.ts), its output on the way to the log (output.ts), its
 * termination (terminate.ts), and, once it ended, its result or its failure.
 */
import { CommandFailure, describeOutcome } from './command-line.js';
import type { OutputSink } from './log-sink.js';
import { CommandOutput } from './output.js';
import { startProcess, type ProcessEnd, type StartedProcess } from './start.js';
import { cancelledBecause, Termination } from './terminate.js';
import type { CommandResult, RunOptions } from './types.js';

export class RunningCommand {
  readonly termination: Termination;
  readonly #process: StartedProcess;
  readonly #output: CommandOutput;
  readonly #sink: OutputSink;
  readonly #command: string;
  readonly #args: readonly string[];
  readonly #options: RunOptions;

  constructor(
    command: string,
    args: readonly string[],
    options: RunOptions,
    sink: OutputSink,
    stdin: 'ignore' | 'pipe',
  ) {
    this.#command = command;
    this.#args = args;
    this.#options = options;
    this.#sink = sink;
    this.#process = startProcess(command, args, options, stdin);
    this.#output = new CommandOutput(
      this.#process,
      (bytes) => sink.write(bytes),
      options.captureStdout === true,
    );
    this.termination = new Termination(this.#process, options);
  }

  get process(): StartedProcess {
    return this.#process;
  }

  /** Resolves once the process exited and all its output reached the sink. */
  async ended(): Promise<ProcessEnd> {
    const end = await this.#process.ended;
    this.#output.flush();
    return end;
  }

  /** The result when the command succeeded; else its outcome goes to the log and this throws. */
  result(end: ProcessEnd, startedAt: number): CommandResult {
    const { timedOut, aborted, timeoutMs } = this.termination;
    const result: CommandResult = {
      command: this.#command,
      args: this.#args,
      exitCode: end.exitCode,
      signal: end.signal,
      timedOut,
      aborted,
      ...(aborted ? cancelledBecause(this.#options.signal) : {}),
      ...(end.spawnError !== undefined ? { spawnError: end.spawnError } : {}),
      ...(timeoutMs > 0 ? { timeoutSeconds: this.#options.timeoutSeconds } : {}),
      durationMs: Math.round(performance.now() - startedAt),
      stdout: this.#output.stdout(),
    };
    if (result.exitCode === 0 && !timedOut && !aborted) return result;
    this.#sink.write(`\n# ${describeOutcome(result)}\n`);
    throw new CommandFailure(result, this.#sink.displayLine);
  }
}

/** The failure of a command whose signal was aborted before it started: nothing runs. */
export function abortedBeforeStart(
  command: string,
  args: readonly string[],
  signal: AbortSignal | undefined,
  sink: OutputSink,
): CommandFailure {
  const result: CommandResult = {
    command,
    args,
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: true,
    ...cancelledBecause(signal),
    durationMs: 0,
    stdout: '',
  };
  sink.write(`# ${describeOutcome(result)}\n`);
  return new CommandFailure(result, sink.displayLine);
}
