// The quick start checks its port before anything else: a taken or invalid PORT ends it at once
// with a message naming the port and how to choose another, before it installs or starts anything.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function quickstart(
  port: string,
  path = process.env.PATH,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['scripts/quickstart.sh'], {
      cwd: ROOT,
      env: { PATH: path, HOME: process.env.HOME, PORT: port },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Past the check the script would install and start everything: stop it, the test has failed.
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    // `close`, not `exit`: the output may still be arriving when the process has exited.
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
    child.once('error', (problem) => {
      clearTimeout(guard);
      resolve({ code: null, stdout, stderr: `${stderr}could not start bash: ${problem.message}` });
    });
  });
}

test('a port already taken on 127.0.0.1 is named with the way to choose another', async (t) => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const res = await quickstart(String(port));
  t.is(res.code, 1);
  t.is(
    res.stderr.trim(),
    `port ${port} on 127.0.0.1 is already in use; choose another: PORT=8081 bash scripts/quickstart.sh`,
  );
  t.is(res.stdout, '', 'nothing else ran (no install output)');
});

test('a PORT that is not a port is refused the same way', async (t) => {
  const res = await quickstart('80x');
  t.is(res.code, 1);
  t.regex(
    res.stderr,
    /^PORT=80x is not a TCP port \(1-65535\); choose one: PORT=8081 bash scripts\/quickstart\.sh/,
  );
  t.is(res.stdout, '');
});

test('on a machine without Node.js, a taken port is still named before anything is installed', async (t) => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  // A search path with what the script needs up to its port check, and no node.
  const bin = mkdtempSync(join(tmpdir(), 'ibs-no-node-'));
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  for (const tool of ['bash', 'dirname']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  const res = await quickstart(String(port), bin);
  t.is(res.code, 1);
  t.is(
    res.stderr.trim(),
    `port ${port} on 127.0.0.1 is already in use; choose another: PORT=8081 bash scripts/quickstart.sh`,
  );
  t.is(res.stdout, '');
});
