// Process handling for the stack: short commands, detached daemons with pid files and logs,
// process-group shutdown, and a sweep that finds every process the stack started (marker variable).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Layout } from './layout.js';

/** Every daemon of the stack (and everything it forks) carries this variable = the stack dir. */
export const MARK_VAR = 'IBS_STACK_MARK';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command (argv array, no shell) and returns its output; throws with stderr on failure. */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err) {
          const msg = `${cmd} ${args.join(' ')} failed: ${err.message.split('\n')[0]}\n${stderr || stdout}`;
          reject(new Error(msg.trim()));
        } else resolve({ stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

export function pidFile(l: Layout, name: string): string {
  return path.join(l.run, `${name}.pid`);
}

export function logFile(l: Layout, name: string): string {
  return path.join(l.logs, `${name}.log`);
}

function procEnvHasMark(pid: number, root: string): boolean {
  try {
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
    return env.split('\0').includes(`${MARK_VAR}=${root}`);
  } catch {
    return false;
  }
}

/** Some daemons (sshd) overwrite their environment with their process title; their title keeps the
 * stack dir in their arguments. */
function procArgsMentionRoot(pid: number, root: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(`${root}/`);
  } catch {
    return false;
  }
}

function isSshdTitle(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('sshd:');
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** The pid recorded for a component, if that process is alive and really belongs to this stack. */
export function livePid(l: Layout, name: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile(l, name), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 1) return undefined;
  if (isZombie(pid)) return undefined;
  if (!procEnvHasMark(pid, l.root) && !procArgsMentionRoot(pid, l.root)) return undefined;
  return pid;
}

export interface DetachedSpec {
  name: string;
  cmd: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Starts a daemon in its own session/process group, output appended to logs/<name>.log. */
export function startDetached(l: Layout, spec: DetachedSpec): number {
  fs.mkdirSync(l.run, { recursive: true });
  fs.mkdirSync(l.logs, { recursive: true });
  const log = logFile(l, spec.name);
  fs.appendFileSync(log, `\n=== ${new Date().toISOString()} start: ${spec.cmd} ${spec.args.join(' ')}\n`);
  const fd = fs.openSync(log, 'a');
  try {
    const child = spawn(spec.cmd, spec.args, {
      cwd: spec.cwd ?? l.root,
      env: { ...(spec.env ?? baseEnv()), [MARK_VAR]: l.root },
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    // A failed spawn (ENOENT) is reported by the throw below, not by an unhandled 'error' event.
    child.once('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not spawn ${spec.cmd}`);
    child.unref();
    fs.writeFileSync(pidFile(l, spec.name), `${child.pid}\n`);
    return child.pid;
  } finally {
    fs.closeSync(fd);
  }
}

/** A clean environment for daemons: PATH with the stack's binaries, no DOCKER_* leaking in. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'TZ', 'USER', 'LOGNAME']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH = `/opt/ibs-docker/bin:${env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}`;
  return { ...env, ...extra };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch {
    return false;
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

/** Stops a component: SIGTERM to its process group, SIGKILL after graceMs. Removes the pid file. */
export async function stopComponent(l: Layout, name: string, graceMs = 5000): Promise<boolean> {
  const pid = livePid(l, name);
  let stopped = false;
  if (pid !== undefined) {
    signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (alive(pid) && Date.now() < deadline) await sleep(50);
    if (alive(pid)) signalGroup(pid, 'SIGKILL');
    while (alive(pid)) await sleep(20);
    stopped = true;
  }
  fs.rmSync(pidFile(l, name), { force: true });
  return stopped;
}

/** Every live process carrying this stack's marker (except this one). */
export function markedPids(l: Layout): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const mine = procEnvHasMark(pid, l.root) || (isSshdTitle(pid) && procArgsMentionRoot(pid, l.root));
    if (mine && !isZombie(pid)) out.push(pid);
  }
  return out;
}

export function describePid(pid: number): string {
  try {
    return `${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim()}`;
  } catch {
    return String(pid);
  }
}

/** Kills every remaining marked process (TERM, then KILL). Returns what it found. */
export async function sweep(l: Layout, graceMs = 3000): Promise<string[]> {
  const found = markedPids(l);
  const described = found.map(describePid);
  for (const pid of found) signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (found.some(alive) && Date.now() < deadline) await sleep(50);
  for (const pid of found.filter(alive)) signalGroup(pid, 'SIGKILL');
  return described;
}

/**
 * A TCP port that is free on 127.0.0.1 right now, chosen below the kernel's ephemeral range: a port
 * from that range can be taken by any outgoing connection or `listen(0)` between the choice and
 * the listen of the process it is for (seen as EADDRINUSE under load).
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  const from = 20_000;
  if (low - from < 1000) return kernelPort();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await portFree(port)) return port;
  }
  return kernelPort();
}

/** The first port of the range the kernel hands out for outgoing connections and `listen(0)`. */
function ephemeralLow(): number {
  try {
    const low = Number(
      fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.setTimeout(1000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** Polls check() until it returns true; throws after timeoutMs (or when the watched pid died). */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs?: number; pid?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  for (;;) {
    if (await check().catch(() => false)) return;
    if (opts.pid !== undefined && !alive(opts.pid)) throw new Error(`${what}: process ${opts.pid} exited`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${opts.timeoutMs ?? 20_000} ms`);
    await sleep(50);
  }
}

export function tail(file: string, lines = 15): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
