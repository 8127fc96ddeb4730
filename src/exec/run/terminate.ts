/**
 * How a command's process group is ended before its own exit (as execa's lib/terminate/): a
 * timeout, counted from the command's start, or an abort sends SIGTERM to the whole group, then
 * SIGKILL after the grace; what the leader leaves in its group when it exits holds our pipes and
 * is killed at once. A Cancellation as the abort's reason names why in the outcome.
 */
import { cancellationOf } from '../cancellation.js';
import { killGroup } from '../process-groups.js';
import type { StartedProcess } from './start.js';
import type { RunOptions } from './types.js';

const DEFAULT_KILL_GRACE_MS = 2000;

type TerminationOptions = Pick<RunOptions, 'timeoutSeconds' | 'killGraceMs' | 'signal' | 'groups'>;

/** `{ cancelledBecause }` when the signal's reason is a Cancellation, else `{}`. */
export function cancelledBecause(signal: AbortSignal | undefined): { cancelledBecause?: string } {
  const cancellation = cancellationOf(signal?.reason);
  return cancellation === undefined ? {} : { cancelledBecause: cancellation.message };
}

export class Termination {
  readonly #pid: number | undefined;
  readonly #options: TerminationOptions;
  #timedOut = false;
  #aborted = false;
  #timeoutTimer: NodeJS.Timeout | undefined;
  /** Set once SIGTERM was sent: SIGKILL follows when it fires. */
  #graceTimer: NodeJS.Timeout | undefined;
  readonly #onAbort = (): void => {
    this.#aborted = true;
    this.terminate();
  };

  constructor(child: Pick<StartedProcess, 'pid' | 'onExit'>, options: TerminationOptions) {
    this.#pid = child.pid;
    this.#options = options;
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    child.onExit(() => {
      if (this.#pid !== undefined) killGroup(this.#pid, 'SIGKILL');
    });
  }

  get timeoutMs(): number {
    return (this.#options.timeoutSeconds ?? 0) * 1000;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Ended by the abort (a timeout that fired too wins). */
  get aborted(): boolean {
    return this.#aborted && !this.#timedOut;
  }

  /** The command starts now: its timeout runs from here. */
  startTimeout(): void {
    if (this.timeoutMs > 0)
      this.#timeoutTimer = setTimeout(() => {
        this.#timedOut = true;
        this.terminate();
      }, this.timeoutMs);
  }

  /** SIGTERM to the group, SIGKILL after the grace (once). */
  terminate(): void {
    if (this.#pid === undefined || this.#graceTimer !== undefined) return;
    const pid = this.#pid;
    killGroup(pid, 'SIGTERM');
    this.#graceTimer = setTimeout(
      () => killGroup(pid, 'SIGKILL'),
      this.#options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    );
  }

  /** The command is over: no timer, no listener left, and its group is no longer live. */
  dispose(): void {
    clearTimeout(this.#timeoutTimer);
    clearTimeout(this.#graceTimer);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    if (this.#pid !== undefined) this.#options.groups?.delete(this.#pid);
  }
}
