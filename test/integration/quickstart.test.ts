// The README's first command, end to end against the running stack: `scripts/quickstart.sh` on a
// free port, its printed curls run exactly as printed, its own output at most 40 lines (the rest in
// the log file it names), and the service in embedded mode even with a Redis URL in its environment.
// The service is stopped afterwards; the stack only if this test started it.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { eventually } from '../helpers/eventually.js';
import { cmdlineOf, descendantPids } from '../helpers/processes.js';
import { isListening } from '../helpers/service-process.js';
import { freePort } from '../stack/proc.js';
import { stackEnv } from '../stack/env.js';
import { layout } from '../stack/layout.js';
import { currentOwnership } from '../stack/session.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Quickstart {
  readonly child: ChildProcess;
  output: () => string;
  readonly exited: Promise<number | string>;
}

function startQuickstart(env: Record<string, string>): Quickstart {
  const child = spawn('bash', ['scripts/quickstart.sh'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (problem) => resolve(`not started: ${problem.message}`));
  });
  return { child, output: () => out, exited };
}

/** The two commands the script prints: the build curl (two lines) and the read-back curl. */
function printedCommands(output: string): { build: string; readBack: string } | undefined {
  const build = /\n\n( {2}curl -sS -X POST [^\n]*\\\n[^\n]*)\n\nThen read it back:/.exec(output)?.[1];
  const readBack = /Then read it back:\n\n( {2}curl -sS "[^\n]*)\n\n/.exec(output)?.[1];
  return build === undefined || readBack === undefined ? undefined : { build, readBack };
}

/** Runs a printed command as pasted into a shell; curl's config (CURL_HOME) adds the status line. */
async function pasted(
  text: string,
  curlHome: string,
): Promise<{ status: string; body: Record<string, unknown> }> {
  const res = await execa('bash', ['-c', text], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CURL_HOME: curlHome },
    extendEnv: false,
    reject: false,
  });
  const lines = res.stdout.trimEnd().split('\n');
  const status = lines.pop() ?? '';
  const answer = lines.join('\n');
  try {
    return { status, body: JSON.parse(answer) as Record<string, unknown> };
  } catch {
    return { status, body: { unparsed: `${answer}\n${res.stderr}` } };
  }
}

interface Stopped {
  readonly code: number | string;
  /** Processes the script started that still ran after it ended (killed then). */
  readonly leftovers: string[];
  readonly listening: boolean;
}

/** SIGTERM to the script, which passes it on to the service and ends once the service has. */
async function stopQuickstart(qs: Quickstart, port: number): Promise<Stopped> {
  const started = qs.child.pid === undefined ? [] : descendantPids(qs.child.pid);
  qs.child.kill('SIGTERM');
  const code = await Promise.race([
    qs.exited,
    new Promise<string>((r) => setTimeout(r, 300_000, 'still running')),
  ]);
  const leftovers = started.filter((pid) => cmdlineOf(pid) !== '');
  const names = leftovers.map((pid) => `${pid} ${cmdlineOf(pid)}`);
  for (const pid of leftovers) process.kill(pid, 'SIGKILL');
  return { code, leftovers: names, listening: await isListening(port) };
}

test('the quick start serves the builds its printed curls ask for, in embedded mode', async (t) => {
  t.timeout(20 * 60_000); // the first run on a machine may build dist/
  const ownership = currentOwnership(layout());
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ibs-quickstart-'));
  mkdirSync(join(dir, 'tmp'));
  writeFileSync(join(dir, '.curlrc'), 'write-out = "\\n%{http_code}\\n"\n');
  const qs = startQuickstart({
    ...(process.env as Record<string, string>),
    PORT: String(port),
    TMPDIR: join(dir, 'tmp'),
    // A user's shell may hold these: taken as options, the service would refuse to start (a TLS
    // server name without TLS files) or run in Redis mode against nothing.
    REDIS_URL: 'redis://127.0.0.1:1',
    BUILDER_TLS_SERVER_NAME: 'localhost',
  });
  t.teardown(async () => {
    if (qs.child.exitCode === null && qs.child.signalCode === null) await stopQuickstart(qs, port);
    rmSync(dir, { recursive: true, force: true });
    if (ownership === 'owned') await execa('npm', ['run', '--silent', 'stack', '--', 'down'], { cwd: ROOT });
  });
  const printed = await eventually(
    () => {
      if (qs.child.exitCode !== null || qs.child.signalCode !== null)
        throw new Error(`the quick start ended early:\n${qs.output()}`);
      return printedCommands(qs.output());
    },
    { timeout: 15 * 60_000, interval: 200, what: () => `the printed curls in:\n${qs.output()}` },
  );
  const stack = stackEnv(); // up now: the quick start started it or found it running

  const built = await pasted(printed.build, dir);
  t.is(built.status, '200', JSON.stringify(built.body));
  t.like(built.body, { registry: stack.REGISTRY_ANON, name: 'feature', branch: 'main' });
  t.regex(String(built.body.digest), /^sha256:[0-9a-f]{64}$/);

  const read = await pasted(printed.readBack, dir);
  t.is(read.status, '200', JSON.stringify(read.body));
  t.is(read.body.image, built.body.image);
  const configuration = read.body.configuration as Record<string, unknown>;
  t.deepEqual(configuration.postCreateCommands, ['hello', 'hello'], "the feature's command, then the file's");
  t.deepEqual((read.body.vscode as { extensions: unknown }).extensions, [
    'ibs.hello-feature',
    'ibs.fixture-feature',
  ]);

  const config = (await (await fetch(`http://127.0.0.1:${port}/config`)).json()) as Record<string, unknown>;
  t.deepEqual(config.redis, { configured: false });
  const stopped = await stopQuickstart(qs, port);
  t.deepEqual(stopped, { code: 0, leftovers: [], listening: false }, qs.output().slice(-3000));

  const output = qs.output();
  t.true(output.trimEnd().split('\n').length <= 40, output);
  const log = /the full output goes to (\S+)\n/.exec(output)?.[1] ?? '';
  t.true(log.startsWith(join(dir, 'tmp')), output);
  t.regex(readFileSync(log, 'utf8'), /\[install\] done/, 'the installer wrote to the named log');
});
