/**
 * The start of a deferred command (runDeferred), by how its caller settles it:
 * | state     | the start gave...             | then                                  |
 * | waiting   | (not settled yet)             | output held back, no timeout          |
 * | started   | a DeferredStart               | log attached, timeout, stdin sent     |
 * | cancelled | undefined (or rejected)       | stdin closed, group ended; no result  |
 * | refused   | display args holding a secret | as cancelled, then runDeferred throws |
 */
import { commandLine, secretInArgv } from './command-line.js';
import type { OutputSink } from './log-sink.js';
import type { RunningCommand } from './running.js';
import type { DeferredStart, Display } from './types.js';

export type DeferredState =
  | { readonly name: 'waiting' }
  | { readonly name: 'started'; readonly at: number }
  | { readonly name: 'cancelled' }
  | { readonly name: 'refused'; readonly shown: Display };

export class DeferredLaunch {
  #state: DeferredState = { name: 'waiting' };
  readonly #shown: Display;
  readonly #secrets: readonly string[];
  readonly #running: RunningCommand;
  readonly #sink: OutputSink;

  constructor(shown: Display, secrets: readonly string[], running: RunningCommand, sink: OutputSink) {
    this.#shown = shown;
    this.#secrets = secrets;
    this.#running = running;
    this.#sink = sink;
    // A child gone before its start was written: the write fails (EPIPE), its exit tells the outcome.
    running.process.stdin?.on('error', () => undefined);
  }

  get state(): DeferredState {
    return this.#state;
  }

  /** The start settled with `startWith`. */
  begin(startWith: DeferredStart | undefined): void {
    if (startWith === undefined) return this.#end({ name: 'cancelled' });
    const shown = startWith.display ?? this.#shown;
    if (secretInArgv(shown.command, shown.args, this.#secrets)) return this.#end({ name: 'refused', shown });
    this.#sink.attach(startWith.log, commandLine(shown.command, shown.args, this.#secrets));
    this.#state = { name: 'started', at: performance.now() };
    this.#running.termination.startTimeout();
    this.#running.process.stdin?.end(startWith.stdin);
  }

  #end(state: DeferredState): void {
    this.#state = state;
    this.#running.process.stdin?.end();
    this.#running.termination.terminate();
  }
}
