/**
 * THE one wrapper for every subprocess the service starts (git, ssh via git, docker buildx,
 * devcontainer). Rules it enforces:
 * - argv arrays only, never a shell;
 * - an explicit environment: `baseEnv` (config.childEnv, an allowlist) plus the given vars,
 *   nothing inherited from the service's own environment;
 * - the child leads its own process group; a timeout or an abort sends SIGTERM to the whole
 *   group, then SIGKILL after a short grace; leftovers of the group are killed when the leader exits;
 * - stdout and stderr stream into a command log, meeting in whole lines (line-gate.ts; masked there);
 * - no known secret in argv (checked before spawning).
 */
import { execa } from 'execa';
import { maskSecrets, secretVariants } from '../logs/masking.js';
import type { CommandLogWriter } from '../logs/types.js';
import { cancellationOf } from './cancellation.js';
import { createLineGate } from './line-gate.js';
import { killGroup, type ProcessGroups } from './process-groups.js';
import { shellWord } from '../shell-quote.js';

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
  readonly display?: { readonly command: string; readonly args: readonly string[] };
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

const DEFAULT_KILL_GRACE_MS = 2000;
const MAX_CAPTURE_BYTES = 1024 * 1024;

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

function secretInArgv(command: string, args: readonly string[], secrets: readonly string[]): boolean {
  return secrets.some(
    (secret) =>
      secret.length >= MIN_CHECKED_SECRET_LENGTH && [command, ...args].some((arg) => arg.includes(secret)),
  );
}

function checkArgv(command: string, args: readonly string[], secrets: readonly string[]): void {
  // A programming error, never a user error: refuse before anything starts.
  if (secretInArgv(command, args, secrets))
    throw new Error(`refusing to run ${command}: a secret would appear in its argv`);
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
  readonly display?: { readonly command: string; readonly args: readonly string[] };
}

/** run()'s options for a deferred command: the log and the display come with the start. */
export type DeferredRunOptions = Omit<RunOptions, 'log' | 'display' | 'captureStdout'>;

/**
 * Runs `command args` and resolves with its result when it exits 0; rejects with a
 * CommandFailure (carrying the same result shape) otherwise.
 */
export async function run(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<CommandResult> {
  checkArgv(command, args, options.secrets ?? []);
  return execute(command, args, options, undefined);
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
  checkArgv(command, args, options.secrets ?? []);
  return execute(
    command,
    args,
    options,
    start.catch(() => undefined),
  );
}

/**
 * The bytes of a stream's chunks up to the last whole UTF-8 character: an incomplete one at a
 * chunk's end waits for the stream's next chunk, so that output of the other stream written in
 * between never splits a character.
 */
function characterAligned(): { next(chunk: Uint8Array): Uint8Array; rest(): Uint8Array } {
  let held: Uint8Array = new Uint8Array(0);
  return {
    next(chunk) {
      const data = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      const whole = wholeCharacters(data);
      held = data.subarray(whole);
      return whole === data.length ? data : data.subarray(0, whole);
    },
    rest() {
      const rest = held;
      held = new Uint8Array(0);
      return rest;
    },
  };
}

/** The length of `bytes` without an incomplete UTF-8 character at its end. */
function wholeCharacters(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] ?? 0;
    // A continuation byte: the character starts further back.
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** How a command's output reaches its log: at once (run), or once started (runDeferred). */
class OutputSink {
  #log: CommandLogWriter | undefined;
  #held: (string | Uint8Array)[] | undefined;
  constructor(log: CommandLogWriter | undefined, deferred: boolean) {
    this.#log = log;
    this.#held = deferred ? [] : undefined;
  }
  write(output: string | Uint8Array): void {
    if (this.#held !== undefined) this.#held.push(output);
    else this.#log?.write(output);
  }
  /** The log is known: the command line first, then what was held back. */
  attach(log: CommandLogWriter | undefined, displayLine: string): void {
    this.#log = log;
    log?.write(`$ ${displayLine}\n`);
    for (const text of this.#held ?? []) log?.write(text);
    this.#held = undefined;
  }
}

function execute(
  command: string,
  args: readonly string[],
  options: RunOptions,
  deferred: undefined,
): Promise<CommandResult>;
function execute(
  command: string,
  args: readonly string[],
  options: RunOptions,
  deferred: Promise<DeferredStart | undefined>,
): Promise<CommandResult | undefined>;
async function execute(
  command: string,
  args: readonly string[],
  options: RunOptions,
  deferred: Promise<DeferredStart | undefined> | undefined,
): Promise<CommandResult | undefined> {
  const secrets = options.secrets ?? [];
  let displayLine = commandLine(options.display?.command ?? command, options.display?.args ?? args, secrets);
  const sink = new OutputSink(options.log, deferred !== undefined);
  if (deferred === undefined) options.log?.write(`$ ${displayLine}\n`);

  const env: Record<string, string> = { ...options.baseEnv, ...options.env };
  const timeoutMs = (options.timeoutSeconds ?? 0) * 1000;
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  let started = performance.now();
  let timedOut = false;
  let aborted = false;
  let stdout = '';
  let stdoutBytes = 0;

  const cancelledBecause = (): { cancelledBecause?: string } => {
    const cancellation = cancellationOf(options.signal?.reason);
    return cancellation === undefined ? {} : { cancelledBecause: cancellation.message };
  };
  if (options.signal?.aborted) {
    const startedWith = deferred === undefined ? undefined : await deferred;
    if (deferred !== undefined && startedWith === undefined) return undefined;
    if (startedWith !== undefined) {
      displayLine = startedDisplayLine(command, args, startedWith, secrets);
      sink.attach(startedWith.log, displayLine);
    }
    const result: CommandResult = {
      command,
      args,
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      ...cancelledBecause(),
      durationMs: 0,
      stdout: '',
    };
    sink.write(`# ${describeOutcome(result)}\n`);
    throw new CommandFailure(result, displayLine);
  }

  const child = execa(command, [...args], {
    env,
    extendEnv: false,
    shell: false,
    cwd: options.cwd,
    detached: true,
    stdin: deferred === undefined ? 'ignore' : 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  const pid = child.pid;
  if (pid !== undefined) {
    options.groups?.add(pid);
    options.onSpawn?.(pid);
  }

  // Output goes to the log as bytes (the log masks whole lines of bytes); only captured stdout is decoded.
  const outDecoder = new TextDecoder();
  const gate = createLineGate((bytes) => sink.write(bytes));
  const out = characterAligned();
  const err = characterAligned();
  child.stdout?.on('data', (chunk: Uint8Array) => {
    if (options.captureStdout && stdoutBytes < MAX_CAPTURE_BYTES) {
      stdout += outDecoder.decode(chunk, { stream: true });
      stdoutBytes += chunk.length;
    }
    gate.write('stdout', out.next(chunk));
  });
  child.stderr?.on('data', (chunk: Uint8Array) => gate.write('stderr', err.next(chunk)));
  // A child gone before its start was written: the write fails (EPIPE), its exit tells the outcome.
  child.stdin?.on('error', () => undefined);

  let graceTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    if (pid === undefined || graceTimer !== undefined) return;
    killGroup(pid, 'SIGTERM');
    graceTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
  };
  let timeoutTimer: NodeJS.Timeout | undefined;
  const startTimeout = (): void => {
    if (timeoutMs > 0)
      timeoutTimer = setTimeout(() => {
        timedOut = true;
        terminate();
      }, timeoutMs);
  };
  const onAbort = (): void => {
    aborted = true;
    terminate();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // When the leader exits, whatever it left in its group is an orphan holding our pipes: kill it.
  child.once('exit', () => {
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  });

  let refused: { readonly command: string; readonly args: readonly string[] } | undefined;
  const end = (): void => {
    child.stdin?.end();
    terminate();
  };
  if (deferred === undefined) startTimeout();
  else
    void deferred.then((startWith) => {
      if (startWith === undefined) return end();
      const shown = startWith.display ?? { command, args };
      if (secretInArgv(shown.command, shown.args, secrets)) {
        refused = shown;
        return end();
      }
      displayLine = commandLine(shown.command, shown.args, secrets);
      sink.attach(startWith.log, displayLine);
      started = performance.now();
      startTimeout();
      child.stdin?.end(startWith.stdin);
    });

  const outcome = await child;
  // Both streams have ended: what they held goes on (and no timer is left).
  gate.write('stdout', out.rest());
  gate.write('stderr', err.rest());
  gate.end();
  // The outcome is written where the start says: wait for it (the caller settles it).
  const startedWith = deferred === undefined ? undefined : await deferred;
  clearTimeout(timeoutTimer);
  clearTimeout(graceTimer);
  options.signal?.removeEventListener('abort', onAbort);
  if (pid !== undefined) options.groups?.delete(pid);
  if (refused !== undefined) checkArgv(refused.command, refused.args, secrets);
  if (deferred !== undefined && startedWith === undefined) return undefined;
  if (options.captureStdout) stdout += outDecoder.decode();

  const spawnFailed =
    pid === undefined || (outcome.exitCode === undefined && !outcome.signal && outcome.failed);
  const result: CommandResult = {
    command,
    args,
    exitCode: outcome.exitCode ?? null,
    signal: outcome.signal ?? null,
    timedOut,
    aborted: aborted && !timedOut,
    ...(aborted && !timedOut ? cancelledBecause() : {}),
    ...(spawnFailed ? { spawnError: spawnErrorCode(outcome.cause) } : {}),
    ...(timeoutMs > 0 ? { timeoutSeconds: options.timeoutSeconds } : {}),
    durationMs: Math.round(performance.now() - started),
    stdout,
  };
  if (result.exitCode === 0 && !timedOut && !result.aborted) return result;
  sink.write(`\n# ${describeOutcome(result)}\n`);
  throw new CommandFailure(result, displayLine);
}

/** The command line of a started deferred command (its display args checked like argv). */
function startedDisplayLine(
  command: string,
  args: readonly string[],
  startWith: DeferredStart,
  secrets: readonly string[],
): string {
  const shown = startWith.display ?? { command, args };
  checkArgv(shown.command, shown.args, secrets);
  return commandLine(shown.command, shown.args, secrets);
}

function spawnErrorCode(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'spawn failed';
}
