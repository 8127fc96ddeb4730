// `npm run stack -- down --session FILE` (what test/run.sh runs at its end) stops the stack only
// when `up --session FILE` found none of its processes running. A `sleep` carrying the stack's
// marker stands in for a running stack; the full `down` sweeps every marked process.
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { layout } from '../../stack/layout.js';
import { MARK_VAR, waitFor } from '../../stack/proc.js';
import { currentOwnership, readSession, writeSession } from '../../stack/session.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function scratch(t: { teardown(fn: () => void): void }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ibs-session-'));
  const stackDir = path.join(dir, 'stack');
  fs.mkdirSync(stackDir);
  const stackProcess = () => {
    const child = spawn('sleep', ['300'], { env: { ...process.env, [MARK_VAR]: stackDir }, stdio: 'ignore' });
    t.teardown(() => child.kill('SIGKILL'));
    return child;
  };
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'test/stack/cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, IBS_STACK_DIR: stackDir },
      encoding: 'utf8',
      timeout: 120_000,
    });
  return { session: path.join(dir, 'session'), stackDir, stackProcess, cli };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/^\S+ \S+ Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/\(.*\)/, 'x'));
  } catch {
    return false;
  }
};

test('a stack with a process running is shared; with none, the session owns it', async (t) => {
  const s = scratch(t);
  t.is(currentOwnership(layout(s.stackDir)), 'owned');
  t.is(currentOwnership(layout(path.join(s.stackDir, 'absent'))), 'owned');
  s.stackProcess();
  await waitFor('marked process', async () => currentOwnership(layout(s.stackDir)) === 'shared');
  t.is(currentOwnership(layout(s.stackDir)), 'shared');
});

test('down --session leaves a shared stack running and stops an owned one', async (t) => {
  const s = scratch(t);
  const child = s.stackProcess();
  await waitFor('marked process', async () => currentOwnership(layout(s.stackDir)) === 'shared');

  writeSession(s.session, 'shared');
  const kept = s.cli('down', '--session', s.session);
  t.is(kept.status, 0, kept.stderr);
  t.regex(kept.stdout, /leaving the stack in .* up: it was running before this session started/);
  t.true(alive(child.pid!));

  fs.rmSync(s.session);
  const unknown = s.cli('down', '--session', s.session);
  t.is(unknown.status, 0, unknown.stderr);
  t.regex(unknown.stdout, /not stopping the stack/);
  t.true(alive(child.pid!));

  writeSession(s.session, 'owned');
  t.is(readSession(s.session), 'owned');
  const stopped = s.cli('down', '--session', s.session);
  t.is(stopped.status, 0, stopped.stdout + stopped.stderr);
  t.regex(stopped.stdout, /swept leftovers:\n.*sleep 300/);
  await waitFor('the stack process stopped', async () => !alive(child.pid!));
});
