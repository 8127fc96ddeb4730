/** What run() and runDeferred() are given and what they tell (src/exec/run.ts re-exports these). */
import type { CommandLogWriter } from '../../logs/types.js';
import type { ProcessGroups } from '../process-groups.js';

/** How a command is shown in its log and in errors. */
export interface Display {
  readonly command: string;
  readonly args: readonly string[];
}

export interface RunOptions {
  /** The allowlisted part of the environment (config.childEnv). */
  readonly baseEnv: Readonly<Record<string, string>>;
  /** Variables added on top of baseEnv for this command. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Kills the process group after this many seconds (none when undefined or 0). */
  readonly timeoutSeconds?: number;
  /** Kills the process group when aborted; a Cancellation as the reason is named in the log and the failure. */
  readonly signal?: AbortSignal;
  /** The service's live process groups (killed if the service exits while they run). */
  readonly groups?: ProcessGroups;
  /** Receives the command line, all stdout and stderr, and the outcome. */
  readonly log?: CommandLogWriter;
  /** Also collects stdout (capped) into the result. */
  readonly captureStdout?: boolean;
  /** Strings that must never appear in argv; also masked in the printed command line. */
  readonly secrets?: readonly string[];
  /** Delay between SIGTERM and SIGKILL (default 2000 ms). */
  readonly killGraceMs?: number;
  /** How the command is shown in the log and in errors, when not as run (e.g. `devcontainer` for `node .../devcontainer.js`). */
  readonly display?: Display;
  /** Called with the pid once the process runs (tests sample /proc with it). */
  readonly onSpawn?: (pid: number) => void;
}

export interface CommandResult {
  readonly command: string;
  readonly args: readonly string[];
  /** null when killed by a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** Killed because the AbortSignal fired. */
  readonly aborted: boolean;
  /** Why, when the signal's reason was a Cancellation (client gone, job deadline, shutdown). */
  readonly cancelledBecause?: string;
  /** Set when the command could not be started (e.g. ENOENT). */
  readonly spawnError?: string;
  readonly timeoutSeconds?: number;
  readonly durationMs: number;
  /** Collected stdout when captureStdout was set, else ''. */
  readonly stdout: string;
}

/**
 * The inputs of a deferred command (runDeferred) known only later: what to write to its stdin,
 * where its output goes and how it is shown.
 */
export interface DeferredStart {
  /** Written to the child's stdin, which is then closed. Never logged. */
  readonly stdin: string;
  readonly log?: CommandLogWriter;
  /** How the command is shown; its args are checked for secrets like argv. */
  readonly display?: Display;
}

/** run()'s options for a deferred command: the log and the display come with the start. */
export type DeferredRunOptions = Omit<RunOptions, 'log' | 'display' | 'captureStdout'>;
