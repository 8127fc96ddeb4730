import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CommandFailure,
  commandLine,
  describeOutcome,
  run,
  type CommandResult,
} from '../../../../src/exec/run.js';
import { Cancellation } from '../../../../src/exec/cancellation.js';
import { ProcessGroups } from '../../../../src/exec/process-groups.js';
import type { CommandLogWriter } from '../../../../src/logs/types.js';
import { eventually } from '../../../helpers/eventually.js';

const baseEnv = { PATH: '/usr/local/bin:/usr/bin:/bin' };

function memoryLog(): CommandLogWriter & { text: () => string; holds: (needle: string) => Promise<void> } {
  const chunks: Buffer[] = [];
  const wakers = new Set<() => void>();
  const text = (): string => Buffer.concat(chunks).toString('utf8');
  return {
    id: 'git-00000000-0000-0000-0000-000000000000',
    write(chunk) {
      chunks.push(Buffer.from(chunk));
      for (const wake of wakers) wake();
    },
    addSecrets: () => undefined,
    close: async () => undefined,
    text,
    /** Resolves once the log holds `needle`. */
    holds: (needle) =>
      new Promise((resolve) => {
        const check = (): void => {
          if (!text().includes(needle)) return;
          wakers.delete(check);
          resolve();
        };
        wakers.add(check);
        check();
      }),
  };
}

/** Gone, or a zombie waiting for its reaper. */
function ended(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

/** Still running ten seconds on (it had that long to end, room for a loaded machine). */
async function alive(pid: number): Promise<boolean> {
  const end = eventually(() => ended(pid), { timeout: 10_000, interval: 50, what: `process ${pid} to end` });
  return end.then(
    () => false,
    () => true,
  );
}

async function failure(promise: Promise<unknown>): Promise<CommandFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CommandFailure) return err;
    throw err;
  }
  throw new Error('expected a CommandFailure');
}

test('streams stdout and stderr into the log and captures stdout', async (t) => {
  const log = memoryLog();
  const result = await run('sh', ['-c', 'echo out; echo err >&2'], { baseEnv, log, captureStdout: true });
  t.is(result.exitCode, 0);
  t.is(result.stdout, 'out\n');
  t.true(log.text().includes('out\n'));
  t.true(log.text().includes('err\n'));
  t.true(log.text().startsWith("$ sh -c 'echo out; echo err >&2'\n"));
});

test('a line of stdout, and a character split across its chunks, stay whole when stderr writes meanwhile', async (t) => {
  const log = memoryLog();
  // Each write waits for the one before to reach its pipe, so the parent reads them as three chunks:
  // "caf" and the first byte of "é", then stderr's line, then the rest of the stdout line.
  const script = [
    "const e = Buffer.from('caf\\u00e9 \\u2713\\n');",
    'process.stdout.write(e.subarray(0, 4), () =>',
    "  setTimeout(() => process.stderr.write('[err]\\n', () =>",
    '    setTimeout(() => process.stdout.write(e.subarray(4)), 100)), 100));',
  ].join('\n');
  await run(process.execPath, ['-e', script], { baseEnv, log });
  // stderr's line waited for the stdout line's newline.
  const text = log.text();
  t.true(text.endsWith('caf\u00e9 \u2713\n[err]\n'), text);
  t.false(text.includes('\ufffd'), text);
});

test('a line in progress reaches the log while the command still runs (a prompt)', async (t) => {
  const log = memoryLog();
  const controller = new AbortController();
  let ended = false;
  const running = failure(
    // The prompt is put together when it runs: the command line never holds it.
    run(process.execPath, ['-e', "process.stdout.write('Pass' + 'word: '); setTimeout(() => {}, 300_000);"], {
      baseEnv,
      log,
      signal: controller.signal,
    }),
  ).finally(() => (ended = true));
  const bound = new Promise<void>((_, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no prompt in the log within 60 s: ${log.text()}`)),
      60_000, // a node start on a loaded machine (the prompt's process lives 300 s, aborted below)
    );
    running.finally(() => clearTimeout(timer)).catch(() => undefined);
  });
  await Promise.race([log.holds('Password: '), bound]);
  t.false(ended);
  controller.abort();
  t.true((await running).result.aborted);
  // Let go once, after the command line; the rest is the outcome.
  const text = log.text();
  t.true(text.slice(text.indexOf('\n') + 1).startsWith('Password: \n# was aborted'), text);
});

test('a non-zero exit rejects with the result shape and the outcome in the log', async (t) => {
  const log = memoryLog();
  const err = await failure(run('sh', ['-c', 'exit 7'], { baseEnv, log }));
  t.is(err.result.exitCode, 7);
  t.false(err.result.timedOut);
  t.is(err.result.command, 'sh');
  t.deepEqual(err.result.args, ['-c', 'exit 7']);
  t.true(err.result.durationMs >= 0);
  t.is(describeOutcome(err.result), 'exited with code 7');
  t.true(log.text().includes('# exited with code 7'));
});

test('arguments are never interpreted by a shell', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'run-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const canary = join(dir, 'canary');
  const hostile = [`; touch ${canary}`, `$(touch ${canary})`, `\`touch ${canary}\``, `| touch ${canary}`];
  const result = await run('printf', ['%s\\n', ...hostile], { baseEnv, captureStdout: true });
  t.is(result.stdout, hostile.map((h) => `${h}\n`).join(''));
  t.false(existsSync(canary));
});

test('the child sees only baseEnv plus the given variables', async (t) => {
  process.env.RUN_TEST_PARENT_SECRET = 'parent-value';
  t.teardown(() => delete process.env.RUN_TEST_PARENT_SECRET);
  const result = await run('env', [], { baseEnv, env: { EXTRA: 'x y' }, captureStdout: true });
  const names = result.stdout
    .trim()
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('=')))
    .sort();
  t.deepEqual(names, ['EXTRA', 'PATH']);
  t.true(result.stdout.includes('EXTRA=x y\n'));
});

test('a timeout kills the whole process group, including grandchildren', async (t) => {
  const log = memoryLog();
  const started = Date.now();
  const err = await failure(
    run('sh', ['-c', 'sleep 100 & echo $!; sleep 100 & echo $!; wait'], {
      baseEnv,
      log,
      captureStdout: true,
      timeoutSeconds: 1,
    }),
  );
  t.true(err.result.timedOut);
  t.is(err.result.signal, 'SIGTERM');
  t.is(describeOutcome(err.result), 'timed out after 1 s');
  t.true(Date.now() - started < 30_000); // not the 100 s of the sleeps
  const pids = err.result.stdout.trim().split('\n').map(Number);
  t.is(pids.length, 2);
  for (const pid of pids) t.false(await alive(pid), `grandchild ${pid} still alive`);
  t.true(log.text().includes('# timed out after 1 s'));
});

test('a group that ignores SIGTERM is SIGKILLed after the grace', async (t) => {
  const started = Date.now();
  const err = await failure(
    run('sh', ['-c', 'trap "" TERM; sleep 100 & echo $!; wait; wait'], {
      baseEnv,
      captureStdout: true,
      timeoutSeconds: 1,
      killGraceMs: 300,
    }),
  );
  t.true(err.result.timedOut);
  t.is(err.result.signal, 'SIGKILL');
  t.true(Date.now() - started < 30_000); // not the 100 s of the sleeps
  t.false(await alive(Number(err.result.stdout.trim())));
});

test('an abort signal kills the process group', async (t) => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const err = await failure(
    run('sh', ['-c', 'sleep 100 & echo $!; wait'], {
      baseEnv,
      captureStdout: true,
      signal: controller.signal,
    }),
  );
  t.true(err.result.aborted);
  t.false(err.result.timedOut);
  t.is(describeOutcome(err.result), 'was aborted');
  t.false(await alive(Number(err.result.stdout.trim())));
});

test('an already aborted signal runs nothing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'run-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const controller = new AbortController();
  controller.abort();
  const err = await failure(run('touch', [join(dir, 'canary')], { baseEnv, signal: controller.signal }));
  t.true(err.result.aborted);
  t.false(existsSync(join(dir, 'canary')));
});

test('orphans left in the group by a leader that exits are killed, and run returns', async (t) => {
  const started = Date.now();
  const result = await run('sh', ['-c', 'sleep 100 & echo $!'], { baseEnv, captureStdout: true });
  t.is(result.exitCode, 0);
  t.true(Date.now() - started < 30_000); // not the 100 s of the sleeps
  t.false(await alive(Number(result.stdout.trim())));
});

test('a secret in argv is refused before anything runs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'run-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const canary = join(dir, 'canary-s3cr3t-token');
  await t.throwsAsync(run('touch', [canary], { baseEnv, secrets: ['s3cr3t-token'] }), {
    message: /secret would appear in its argv/,
  });
  t.false(existsSync(canary));
});

test('a missing command is a failure that says it could not start', async (t) => {
  const err = await failure(run('/nonexistent/command', ['x'], { baseEnv }));
  t.is(err.result.exitCode, null);
  t.is(describeOutcome(err.result), 'could not be started (ENOENT)');
});

test('onSpawn reports the pid of the running child', async (t) => {
  let seen: number | undefined;
  const result = await run('sh', ['-c', 'echo $$'], {
    baseEnv,
    captureStdout: true,
    onSpawn: (p) => (seen = p),
  });
  t.is(Number(result.stdout.trim()), seen ?? -1);
});

const outcome = (over: Partial<CommandResult>): CommandResult => ({
  command: 'git',
  args: [],
  exitCode: null,
  signal: null,
  timedOut: false,
  aborted: false,
  durationMs: 1,
  stdout: '',
  ...over,
});

for (const [name, result, text] of [
  ['exit code', outcome({ exitCode: 128 }), 'exited with code 128'],
  ['timeout', outcome({ timedOut: true, timeoutSeconds: 600, signal: 'SIGTERM' }), 'timed out after 600 s'],
  ['abort', outcome({ aborted: true, signal: 'SIGTERM' }), 'was aborted'],
  ['signal', outcome({ signal: 'SIGSEGV' }), 'was killed by SIGSEGV'],
  ['spawn', outcome({ spawnError: 'EACCES' }), 'could not be started (EACCES)'],
] as const) {
  test(`describeOutcome: ${name}`, (t) => t.is(describeOutcome(result), text));
}

for (const [args, secrets, line] of [
  [['clone', '--', 'https://h/x.git', '/tmp/d'], [], 'git clone -- https://h/x.git /tmp/d'],
  [['-c', 'a b'], [], "git -c 'a b'"],
  [['', "it's"], [], `git '' 'it'\\''s'`],
  [['--x=tok3n'], ['tok3n'], 'git --x=***'],
  // The one masking rule (secrets/masking.ts): each line of a multi-line secret, longest first.
  [
    ['--key=line-one-of-a-key', '--both=tok3n-and-more'],
    ['-----BEGIN K-----\nline-one-of-a-key\n', 'tok3n', 'tok3n-and-more'],
    'git --key=*** --both=***',
  ],
] as const) {
  test(`commandLine: ${line}`, (t) => t.is(commandLine('git', args, secrets), line));
}

test('a short secret that happens to match an argument does not block the command', async (t) => {
  const result = await run('printf', ['%s', 'main'], { baseEnv, secrets: ['main'], captureStdout: true });
  t.is(result.stdout, 'main');
});

test('a Cancellation reason is named in the outcome and the log; the live group is tracked while it runs', async (t) => {
  const controller = new AbortController();
  const groups = new ProcessGroups();
  const log = memoryLog();
  const running = failure(
    run('sh', ['-c', 'echo started; sleep 100'], {
      baseEnv,
      log,
      groups,
      signal: controller.signal,
      onSpawn: () => setTimeout(() => controller.abort(new Cancellation('client_gone')), 100),
    }),
  );
  const err = await running;
  t.true(err.result.aborted);
  t.is(describeOutcome(err.result), 'was cancelled: the client went away before the build ended');
  t.regex(log.text(), /# was cancelled: the client went away before the build ended/);
  t.is(groups.size, 0);
});

test('ProcessGroups counts the groups of running commands', async (t) => {
  const groups = new ProcessGroups();
  let during = -1;
  await run('sh', ['-c', 'sleep 0.2'], { baseEnv, groups, onSpawn: () => (during = groups.size) });
  t.is(during, 1);
  t.is(groups.size, 0);
});
