// test/run.sh (the README's test command, run by .ci/run) on a machine where a stack already runs,
// as after the quick start: it uses that stack and leaves it running, even with CI=true; and a run
// stopped by a signal reports itself interrupted and fails.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { eventually } from '../helpers/eventually.js';
import { COMPONENTS } from '../stack/components/index.js';
import { stackEnv } from '../stack/env.js';
import { layout } from '../stack/layout.js';
import { livePid, run } from '../stack/proc.js';

const env = stackEnv();

/** The pid of each running daemon of the stack. */
function daemonPids(): Record<string, number> {
  const l = layout(env.STACK_DIR);
  const pids = COMPONENTS.flatMap((c) => c.daemons).map((d) => [d, livePid(l, d)] as const);
  return Object.fromEntries(pids.filter((p): p is readonly [string, number] => p[1] !== undefined));
}

test('test/run.sh leaves a stack it did not start running', async (t) => {
  const before = daemonPids();
  t.truthy(before.dockerd && before.builder && before.redis, JSON.stringify(before));
  // A quick unit file stands in for the whole suite: the stop logic runs after any test run. Its
  // temporary directory is its own: the tests running beside it write into this run's.
  const own = mkdtempSync(join(tmpdir(), 'ibs-nested-run-'));
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  const { stdout } = await run('bash', ['test/run.sh', 'test/unit/stack/stack-env.test.ts'], {
    env: { ...process.env, CI: 'true', IBS_STACK_DIR: env.STACK_DIR, TMPDIR: own },
    timeoutMs: 280_000,
  });
  t.regex(stdout, /leaving the stack in .* up: it was running before this session started/);
  t.regex(stdout, /[1-9]\d* passed, 0 failed, 0 crashed/);
  // Every daemon that ran before still runs, the same process (a test file running meanwhile may
  // have stopped a bridge of its own accord: `up` restarts it, which adds an entry).
  const after = daemonPids();
  for (const [name, pid] of Object.entries(before)) t.is(after[name], pid, name);
  t.notThrows(() => stackEnv(env.STACK_DIR));
});

test('test/run.sh stopped by SIGTERM says it was interrupted, never "0 failed", and fails', async (t) => {
  const own = mkdtempSync(join(tmpdir(), 'ibs-nested-run-'));
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  // Every unit test: a run long enough to be stopped in the middle.
  const child = execa('bash', ['test/run.sh', 'test/unit'], {
    env: { ...process.env, IBS_STACK_DIR: env.STACK_DIR, TMPDIR: own },
    reject: false,
    all: true,
  });
  let output = '';
  child.all?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // The first test passed: the signal meets a run in progress.
  await eventually(() => /^ +✔/m.test(output), { timeout: 240_000, what: () => output });
  child.kill('SIGTERM');
  const ended = await child;
  t.not(ended.exitCode, 0, output);
  const closing = output
    .trimEnd()
    .split('\n')
    .find((line) => line.startsWith('interrupted by SIGTERM'));
  t.truthy(closing, output);
  t.regex(closing ?? '', /^interrupted by SIGTERM: [1-9]\d* passed; every other test counts as failed/);
  t.notRegex(output, /\b0 failed\b/);
});
