// runDeferred's start, state by state (src/exec/run/deferred.ts): waiting (output held back),
// started (log attached, stdin sent, timeout running), cancelled (no result, group ended),
// refused (a secret in the display args), and a signal aborted before anything started.
import test from 'ava';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandFailure, runDeferred, type DeferredStart } from '../../../../src/exec/run.js';
import { ProcessGroups } from '../../../../src/exec/process-groups.js';
import { eventually } from '../../../helpers/eventually.js';
import { memoryLog } from '../../../helpers/memory-log.js';

const baseEnv = { PATH: '/usr/local/bin:/usr/bin:/bin' };

async function scratch(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-run-deferred-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const until = (check: () => boolean): Promise<true> => eventually(check);

const gone = (pid: number | undefined): boolean => pid !== undefined && !existsSync(`/proc/${pid}`);

test('waiting, then started: held output follows the command line, then stdin-driven output', async (t) => {
  const marker = join(await scratch(t), 'early-written');
  const log = memoryLog();
  let settle!: (start: DeferredStart) => void;
  const running = runDeferred(
    'sh',
    ['-c', 'echo early; touch "$1"; read line; echo "got $line"', 'sh', marker],
    { baseEnv },
    new Promise<DeferredStart>((resolve) => (settle = resolve)),
  );
  await until(() => existsSync(marker));
  t.is(log.text(), '');
  settle({ stdin: 'hello\n', log, display: { command: 'shown', args: ['it'] } });
  const result = await running;
  t.is(result?.exitCode, 0);
  t.is(log.text(), '$ shown it\nearly\ngot hello\n');
});

test('started: the timeout runs and its outcome is written to the started log', async (t) => {
  const log = memoryLog();
  const err = await t.throwsAsync(
    runDeferred(
      'sh',
      ['-c', 'read x; sleep 100'],
      { baseEnv, timeoutSeconds: 1 },
      Promise.resolve({ stdin: '\n', log }),
    ),
    { instanceOf: CommandFailure },
  );
  t.true(err?.result.timedOut);
  t.regex(log.text(), /^\$ sh -c 'read x; sleep 100'\n\n# timed out after 1 s\n$/);
});

for (const [name, start] of [
  ['resolves with undefined', () => Promise.resolve(undefined)],
  ['rejects', () => Promise.reject(new Error('the job failed first'))],
] as const) {
  test(`cancelled (the start ${name}): no result, the group ended, nothing tracked`, async (t) => {
    const groups = new ProcessGroups();
    let pid: number | undefined;
    const result = await runDeferred(
      'sleep',
      ['100'],
      { baseEnv, groups, onSpawn: (p) => (pid = p) },
      start(),
    );
    t.is(result, undefined);
    t.true(gone(pid));
    t.is(groups.size, 0);
  });
}

test('refused: a secret in the display args throws, the command ends, nothing is logged', async (t) => {
  const log = memoryLog();
  let pid: number | undefined;
  await t.throwsAsync(
    runDeferred(
      'sleep',
      ['100'],
      { baseEnv, secrets: ['s3cr3t-token'], onSpawn: (p) => (pid = p) },
      Promise.resolve({ stdin: '', log, display: { command: 'tool', args: ['--token=s3cr3t-token'] } }),
    ),
    { message: /secret would appear in its argv/ },
  );
  t.true(gone(pid));
  t.is(log.text(), '');
});

test('a signal aborted before anything started: nothing runs; once started it fails as aborted', async (t) => {
  const controller = new AbortController();
  controller.abort();
  let spawned = false;
  const options = { baseEnv, signal: controller.signal, onSpawn: () => (spawned = true) };
  t.is(await runDeferred('true', [], options, Promise.resolve(undefined)), undefined);
  const log = memoryLog();
  const err = await t.throwsAsync(runDeferred('true', [], options, Promise.resolve({ stdin: '', log })), {
    instanceOf: CommandFailure,
  });
  t.true(err?.result.aborted);
  t.is(log.text(), '$ true\n# was aborted\n');
  t.false(spawned);
});
