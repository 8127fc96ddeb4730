/**
 * THE one wrapper for every subprocess the service starts (git, ssh via git, docker buildx,
 * devcontainer): argv only, an explicit environment (config.childEnv), no known secret in argv,
 * the child's whole process group ended on timeout or abort, stdout and stderr in whole lines in
 * a command log. One concern per file in run/: start, deferred (runDeferred), terminate, output.
 */
import { argvRefusal, checkArgv, checkedLine, commandLine } from './run/command-line.js';
import { DeferredLaunch } from './run/deferred.js';
import { OutputSink } from './run/log-sink.js';
import { abortedBeforeStart, RunningCommand } from './run/running.js';
import type { CommandResult, DeferredRunOptions, DeferredStart, RunOptions } from './run/types.js';

export { CommandFailure, commandLine, describeOutcome } from './run/command-line.js';
export type { CommandResult, DeferredRunOptions, DeferredStart, RunOptions } from './run/types.js';

/**
 * Runs `command args` and resolves with its result when it exits 0; rejects with a
 * CommandFailure (carrying the same result shape) otherwise.
 */
export async function run(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<CommandResult> {
  const secrets = options.secrets ?? [];
  checkArgv(command, args, secrets);
  const shown = options.display ?? { command, args };
  const sink = OutputSink.live(options.log, commandLine(shown.command, shown.args, secrets));
  const startedAt = performance.now();
  if (options.signal?.aborted) throw abortedBeforeStart(command, args, options.signal, sink);
  const running = new RunningCommand(command, args, options, sink, 'ignore');
  running.termination.startTimeout();
  const end = await running.ended();
  running.termination.dispose();
  return running.result(end, startedAt);
}

/**
 * Starts `command args` now (process group, signal, groups as run()) with stdin a pipe and its
 * output held back, for a command that prepares itself while its caller is busy (the Dev
 * Containers CLI's launcher). When `start` resolves with a DeferredStart: `start.stdin` is written
 * to it, the command line is logged, its output (held back so far, then live) streams into
 * `start.log`, the timeout starts; then as run(). When `start` resolves with undefined (or
 * rejects): stdin is closed and the group ended; resolves with undefined once it is gone. The
 * caller must settle `start`.
 */
export async function runDeferred(
  command: string,
  args: readonly string[],
  options: DeferredRunOptions,
  start: Promise<DeferredStart | undefined>,
): Promise<CommandResult | undefined> {
  const secrets = options.secrets ?? [];
  checkArgv(command, args, secrets);
  const starting = start.catch(() => undefined);
  const sink = OutputSink.held(commandLine(command, args, secrets));
  if (options.signal?.aborted) return abortedBeforeDeferredStart(command, args, options, starting, sink);
  const running = new RunningCommand(command, args, options, sink, 'pipe');
  const launch = new DeferredLaunch({ command, args }, secrets, running, sink);
  void starting.then((startWith) => launch.begin(startWith));
  const end = await running.ended();
  // The outcome is written where the start says: wait for it (the caller settles it).
  await starting;
  running.termination.dispose();
  const state = launch.state;
  if (state.name === 'refused') throw argvRefusal(state.shown.command);
  if (state.name !== 'started') return undefined;
  return running.result(end, state.at);
}

/** runDeferred with a signal aborted before anything started: once started, it fails as aborted. */
async function abortedBeforeDeferredStart(
  command: string,
  args: readonly string[],
  options: DeferredRunOptions,
  starting: Promise<DeferredStart | undefined>,
  sink: OutputSink,
): Promise<undefined> {
  const startWith = await starting;
  if (startWith === undefined) return undefined;
  sink.attach(startWith.log, checkedLine(startWith.display ?? { command, args }, options.secrets ?? []));
  throw abortedBeforeStart(command, args, options.signal, sink);
}
