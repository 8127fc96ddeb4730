/**
 * `ibs` run as a CI job runs it: a process of its own (`node --import tsx src/client/main.ts`),
 * with only the environment given here. Each stderr line is kept with the time it arrived, so
 * tests can tell when ibs printed what.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface IbsProcess {
  readonly child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
  /** Resolves with Date.now() of the first stderr chunk that (with what came before) holds `needle`. */
  stderrAt: (needle: string, timeoutMs?: number) => Promise<number>;
}

/** What `ibs build` is told: where the service is, the repository, and where the image goes. */
export interface IbsBuild {
  readonly server: string;
  readonly repository: string;
  readonly registry: string;
  readonly name: string;
}

/** The arguments of `ibs build` for `build`, then `more` (--no-cache, --request-id ID, ...). */
export function ibsBuildArgs(build: IbsBuild, ...more: string[]): string[] {
  const { server, repository, registry, name } = build;
  return [
    'build',
    '--server',
    server,
    '--repository',
    repository,
    '--registry',
    registry,
    '--name',
    name,
    ...more,
  ];
}

export function runIbs(args: readonly string[], env: Record<string, string> = {}): IbsProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/client/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const arrivals: { at: number; length: number }[] = [];
  const wake = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
    arrivals.push({ at: Date.now(), length: err.length });
    for (const w of wake) w();
  });
  // 'close', not 'exit': the last of stdout may still be in the pipe when the process has exited.
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      for (const w of wake) w();
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const stderrAt = (needle: string, timeoutMs = 240_000): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`ibs never printed ${needle}: ${err}`)), timeoutMs);
      const done = (problem?: Error): void => {
        clearTimeout(timer);
        wake.delete(check);
        if (problem) reject(problem);
      };
      const check = (): void => {
        const index = err.indexOf(needle);
        if (index >= 0) {
          done();
          resolve(arrivals.find((a) => a.length >= index + needle.length)?.at ?? Date.now());
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done(new Error(`ibs ended without printing ${needle}: ${err}`));
        }
      };
      wake.add(check);
      check();
    });
  return { child, stdout: () => out, stderr: () => err, exited, stderrAt };
}
