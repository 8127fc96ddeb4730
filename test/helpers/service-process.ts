import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';
import { descendantPids } from './processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly dir: string;
  stdout: () => string;
  stderr: () => string;
  /** Parsed JSON lines of stdout. */
  lines: () => Record<string, unknown>[];
  /** Resolves with the exit code (or the signal name) once the process ended. */
  exited: Promise<number | string>;
  /** Resolves once a stdout line has this `msg`. */
  waitForLog: (msg: string, timeoutMs?: number) => Promise<Record<string, unknown>>;
  /**
   * SIGKILL to the service and to every process it started, as when its pod or node is lost (the
   * service runs each command in a process group of its own, so killing the service alone would
   * leave its builds running on as orphans). Resolves once the service has exited.
   */
  lose: () => Promise<void>;
}

/**
 * Runs the real entry (`node --import tsx src/main.ts`) with an isolated environment:
 * its own TMPDIR (scratch), HOME and DOCKER_CONFIG under a fresh temp dir, removed when it exits.
 */
export function spawnService(args: readonly string[], env: Record<string, string> = {}): ServiceProcess {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-main-'));
  mkdirSync(join(dir, 'docker'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      TMPDIR: dir,
      DOCKER_CONFIG: join(dir, 'docker'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      resolve(code ?? signal ?? 'unknown');
    });
    // A process that could not be started: its test fails with the reason (never a crash of the worker).
    child.once('error', (problem) => {
      err += `could not start the service: ${problem.message}\n`;
      rmSync(dir, { recursive: true, force: true });
      resolve(`not started: ${problem.message}`);
    });
  });
  const lines = (): Record<string, unknown>[] =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const waitForLog = async (msg: string, timeoutMs = 60_000): Promise<Record<string, unknown>> => {
    let ended = false;
    void exited.then(() => {
      ended = true;
    });
    return eventually(
      () => {
        const line = lines().find((l) => l.msg === msg);
        if (line) return line;
        if (ended) throw new Error(`process exited before logging "${msg}": ${err}${out}`);
        return undefined;
      },
      { timeout: timeoutMs, interval: 50, what: () => `a "${msg}" log line: ${err}${out}` },
    );
  };
  const lose = async (): Promise<void> => {
    const pid = child.pid;
    if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
      // Everything is stopped first (nothing forks while the tree is read), then killed at once.
      const signal = (target: number, name: NodeJS.Signals): void => {
        try {
          process.kill(target, name);
        } catch {
          // ended meanwhile
        }
      };
      signal(pid, 'SIGSTOP');
      const tree = new Set<number>();
      for (let grew = true; grew;) {
        grew = false;
        for (const other of descendantPids(pid)) {
          if (tree.has(other)) continue;
          tree.add(other);
          signal(other, 'SIGSTOP');
          grew = true;
        }
      }
      for (const target of [pid, ...tree]) signal(target, 'SIGKILL');
    }
    await exited;
  };
  return { child, dir, stdout: () => out, stderr: () => err, lines, exited, waitForLog, lose };
}

/** Whether something accepts TCP connections on host:port (127.0.0.1 unless said). */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
