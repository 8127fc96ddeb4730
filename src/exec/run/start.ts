/**
 * Starts a process: THE one place that spawns (lint: only this file imports execa). argv only,
 * never a shell; an explicit environment, nothing inherited; the child leads its own process
 * group (see terminate.ts), which is tracked in `groups` from its first moment.
 */
import { execa } from 'execa';
import type { Readable, Writable } from 'node:stream';
import type { RunOptions } from './types.js';

/** How a started process ended. */
export interface ProcessEnd {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when it could not be started (e.g. ENOENT). */
  readonly spawnError?: string;
}

export interface StartedProcess {
  /** Also its process group id; undefined when it could not be started. */
  readonly pid: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** A pipe for a deferred command, else null. */
  readonly stdin: Writable | null;
  onExit(listener: () => void): void;
  /** Resolves once the process exited and its output streams ended. */
  readonly ended: Promise<ProcessEnd>;
}

type StartOptions = Pick<RunOptions, 'baseEnv' | 'env' | 'cwd' | 'groups' | 'onSpawn'>;

export function startProcess(
  command: string,
  args: readonly string[],
  options: StartOptions,
  stdin: 'ignore' | 'pipe',
): StartedProcess {
  const child = execa(command, [...args], {
    env: { ...options.baseEnv, ...options.env },
    extendEnv: false,
    shell: false,
    cwd: options.cwd,
    detached: true,
    stdin,
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
  const ended = child.then((outcome): ProcessEnd => {
    const spawnFailed =
      pid === undefined || (outcome.exitCode === undefined && !outcome.signal && outcome.failed);
    return {
      exitCode: outcome.exitCode ?? null,
      signal: outcome.signal ?? null,
      ...(spawnFailed ? { spawnError: spawnErrorCode(outcome.cause) } : {}),
    };
  });
  const onExit = (listener: () => void): void => void child.once('exit', listener);
  return { pid, stdout: child.stdout, stderr: child.stderr, stdin: child.stdin, onExit, ended };
}

function spawnErrorCode(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'spawn failed';
}
