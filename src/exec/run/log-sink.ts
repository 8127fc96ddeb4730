/**
 * Where a command's output goes: its log at once (run), or held back until the log is known
 * (runDeferred), then the command line first, what was held, and the rest live.
 */
import type { CommandLogWriter } from '../../logs/types.js';

export class OutputSink {
  #log: CommandLogWriter | undefined;
  /** Output written before the log is known; undefined once it is. */
  #held: (string | Uint8Array)[] | undefined;
  #displayLine: string;

  private constructor(log: CommandLogWriter | undefined, held: boolean, displayLine: string) {
    this.#log = log;
    this.#held = held ? [] : undefined;
    this.#displayLine = displayLine;
  }

  /** Output to `log`, which gets the command line now. */
  static live(log: CommandLogWriter | undefined, displayLine: string): OutputSink {
    log?.write(`$ ${displayLine}\n`);
    return new OutputSink(log, false, displayLine);
  }

  /** Output held back until attach(). */
  static held(displayLine: string): OutputSink {
    return new OutputSink(undefined, true, displayLine);
  }

  /** The command line as shown (secrets masked). */
  get displayLine(): string {
    return this.#displayLine;
  }

  write(output: string | Uint8Array): void {
    if (this.#held !== undefined) this.#held.push(output);
    else this.#log?.write(output);
  }

  /** The log is known: the command line first, then what was held back. */
  attach(log: CommandLogWriter | undefined, displayLine: string): void {
    this.#log = log;
    this.#displayLine = displayLine;
    log?.write(`$ ${displayLine}\n`);
    for (const text of this.#held ?? []) log?.write(text);
    this.#held = undefined;
  }
}
