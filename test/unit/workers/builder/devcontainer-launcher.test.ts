// The pre-started Dev Containers CLI (pending-cli.ts + devcontainer-launcher.cjs) around a fake CLI script:
// told to run, it runs the script with the args and env it was sent (over stdin, on top of the
// allowlisted base env only), its output in the log after the command line; never told, it ends
// and leaves no process.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cancellation } from '../../../../src/exec/cancellation.js';
import { ProcessGroups } from '../../../../src/exec/process-groups.js';
import { CommandFailure } from '../../../../src/exec/run.js';
import { startPendingCli } from '../../../../workers/builder/pending-cli.js';
import { eventually } from '../../../helpers/eventually.js';
import { memoryLog } from '../../../helpers/memory-log.js';

const FAKE_CLI = `
console.log(JSON.stringify({
  argv: process.argv.slice(2),
  label: process.env.FAKE_LABEL,
  base: process.env.FAKE_BASE,
  parentOnly: process.env.IBS_TEST_PARENT_ONLY,
  main: require.main === module,
}));
if (process.argv[2] === 'fail') { console.error('fake failure'); process.exit(3); }
`;

/** Every process whose command line names `path`. */
function processesRunning(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(path) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function setup(t: { teardown: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-devcontainer-launcher-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cli = join(dir, 'fake-devcontainer.cjs');
  await writeFile(cli, FAKE_CLI);
  const groups = new ProcessGroups();
  const deps = {
    config: { childEnv: { PATH: '/usr/bin:/bin', FAKE_BASE: 'base' }, build: { timeoutSeconds: 0 } },
    groups,
    devcontainerCli: cli,
  };
  return { cli, groups, deps };
}

test('told to run, it runs the script with the args and env sent on stdin, output after the command line', async (t) => {
  const { deps, groups } = await setup(t);
  process.env.IBS_TEST_PARENT_ONLY = 'leaked';
  t.teardown(async () => {
    delete process.env.IBS_TEST_PARENT_ONLY;
  });
  const pending = startPendingCli(deps, { signal: new AbortController().signal, secrets: [] });
  t.is(groups.size, 1, 'started before it is told to run');
  const log = memoryLog();
  const args = ['build', '--workspace-folder', '/tmp/a b'];
  const result = await pending.run(
    args,
    { FAKE_LABEL: 'abc123' },
    {
      log,
      display: { command: 'devcontainer', args },
    },
  );
  t.is(result.exitCode, 0);
  const [first, output] = log.text().split('\n');
  t.is(first, "$ devcontainer build --workspace-folder '/tmp/a b'");
  t.deepEqual(JSON.parse(output ?? ''), {
    argv: args,
    label: 'abc123',
    base: 'base',
    main: true,
  });
  t.is(groups.size, 0);
});

test('a failing CLI fails as run() does, its output and outcome in the log', async (t) => {
  const { deps } = await setup(t);
  const pending = startPendingCli(deps, { signal: new AbortController().signal, secrets: [] });
  const log = memoryLog();
  const err = await t.throwsAsync(
    pending.run(['fail'], {}, { log, display: { command: 'devcontainer', args: ['fail'] } }),
    { instanceOf: CommandFailure },
  );
  t.is(err?.result.exitCode, 3);
  t.regex(log.text(), /^\$ devcontainer fail\n.*\nfake failure\n\n# exited with code 3\n$/s);
});

test('never told to run, discard ends it and leaves no process', async (t) => {
  const { deps, groups, cli } = await setup(t);
  const pending = startPendingCli(deps, { signal: new AbortController().signal, secrets: [] });
  t.is(groups.size, 1);
  t.true(processesRunning(cli).length > 0, 'the launcher runs meanwhile');
  await pending.discard();
  t.is(groups.size, 0);
  t.deepEqual(processesRunning(cli), []);
  await t.throwsAsync(pending.run([], {}, { log: memoryLog(), display: undefined }), {
    message: /discarded before it ran/,
  });
});

test('the job cancelled before the CLI runs: the launcher is killed at once, a later run reports it', async (t) => {
  const { deps, groups, cli } = await setup(t);
  const controller = new AbortController();
  const pending = startPendingCli(deps, { signal: controller.signal, secrets: [] });
  controller.abort(new Cancellation('client_gone'));
  await eventually(() => processesRunning(cli).length === 0, {
    timeout: 15_000,
    interval: 20,
    what: () => `the launcher to end (running: ${processesRunning(cli).join(', ')})`,
  });
  t.deepEqual(processesRunning(cli), []);
  const log = memoryLog();
  const err = await t.throwsAsync(
    pending.run(['build'], {}, { log, display: { command: 'devcontainer', args: ['build'] } }),
    { instanceOf: CommandFailure },
  );
  t.true(err?.result.aborted);
  t.regex(
    log.text(),
    /^\$ devcontainer build\n[\s\S]*# was cancelled: the client went away before the build ended\n$/,
  );
  t.is(groups.size, 0);
});

test('a secret in the CLI args is refused before anything runs, and the launcher ends', async (t) => {
  const { deps, groups, cli } = await setup(t);
  const secret = 'sup3r-s3cret-token';
  const pending = startPendingCli(deps, { signal: new AbortController().signal, secrets: [secret] });
  const log = memoryLog();
  await t.throwsAsync(
    pending.run([secret], {}, { log, display: { command: 'devcontainer', args: [secret] } }),
    { message: /a secret would appear in its argv/ },
  );
  t.is(log.text(), '');
  t.is(groups.size, 0);
  t.deepEqual(processesRunning(cli), []);
});
