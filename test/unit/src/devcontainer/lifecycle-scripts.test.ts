// The generated hook scripts are run for real with sh (and bash), in a scratch directory.
import test from 'ava';
import { execa } from 'execa';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LIFECYCLE_HOOKS,
  hookScript,
  lifecycleScripts,
} from '../../../../src/devcontainer/lifecycle-scripts.js';

type Entry = Record<string, unknown>;

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
  dir: string;
  files: string[];
}

const scratchDirs: string[] = [];

/** Writes the script into a fresh directory and runs it there with `shell`. */
async function runScript(script: string, shell = 'sh'): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-hook-'));
  scratchDirs.push(dir);
  await writeFile(join(dir, 'hook.sh'), script);
  const result = await execa(shell, ['hook.sh'], {
    cwd: dir,
    reject: false,
    timeout: 60_000,
    stripFinalNewline: false,
  });
  const files = (await readdir(dir)).filter((f) => f !== 'hook.sh').sort();
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode ?? -1, dir, files };
}

const scriptOf = (entries: Entry[], hook: (typeof LIFECYCLE_HOOKS)[number] = 'postCreateCommand'): string => {
  const { script } = hookScript(hook, entries);
  if (script === null) throw new Error('expected a script');
  return script;
};

test('no entry sets a hook: null; every hook is present', (t) => {
  const { scripts, warnings } = lifecycleScripts([{ remoteUser: 'x' }, { postCreateCommand: '' }]);
  t.deepEqual(Object.keys(scripts).sort(), [...LIFECYCLE_HOOKS].sort());
  for (const hook of LIFECYCLE_HOOKS) t.is(scripts[hook], null, hook);
  t.deepEqual(warnings, []);
});

test('a script starts with #!/bin/sh', (t) => {
  t.true(scriptOf([{ postCreateCommand: 'true' }]).startsWith('#!/bin/sh\n'));
});

for (const shell of ['sh', 'bash']) {
  test(`${shell}: entries run in label order, each after a line naming its origin`, async (t) => {
    const run = await runScript(
      scriptOf([
        { id: 'ghcr.io/devcontainers/features/node:1', postCreateCommand: 'echo one' },
        { postCreateCommand: ['echo', 'two'] },
        { id: 'ghcr.io/x/y:2', postCreateCommand: { only: 'echo three' } },
      ]),
      shell,
    );
    t.is(run.exitCode, 0, run.stderr);
    t.is(
      run.stdout,
      [
        "Running the postCreateCommand from Feature 'ghcr.io/devcontainers/features/node:1'...",
        'one',
        'Running the postCreateCommand from devcontainer.json...',
        'two',
        "Running the postCreateCommand from Feature 'ghcr.io/x/y:2'...",
        "Running only of postCreateCommand from Feature 'ghcr.io/x/y:2'...",
        'three',
        '',
      ].join('\n'),
    );
    t.is(run.stderr, '');
  });

  test(`${shell}: a failing string command stops the script with its own code`, async (t) => {
    const run = await runScript(
      scriptOf([
        { postCreateCommand: 'echo first' },
        { id: 'feat', postCreateCommand: 'echo failing; exit 7' },
        { postCreateCommand: 'echo later; touch later' },
      ]),
      shell,
    );
    t.is(run.exitCode, 7);
    t.regex(run.stdout, /first\n.*\nfailing\n$/s);
    t.false(run.stdout.includes('later'));
    t.deepEqual(run.files, []);
    t.is(
      run.stderr,
      "postCreateCommand from Feature 'feat' failed with exit code 7. Skipping any further user-provided commands.\n",
    );
  });

  test(`${shell}: an exec array's exit code is kept`, async (t) => {
    const run = await runScript(
      scriptOf([{ onCreateCommand: ['sh', '-c', 'exit 3'] }], 'onCreateCommand'),
      shell,
    );
    t.is(run.exitCode, 3);
    t.regex(run.stderr, /^onCreateCommand from devcontainer\.json failed with exit code 3\./);
  });

  test(`${shell}: a missing program fails with 127`, async (t) => {
    const run = await runScript(
      scriptOf([{ postStartCommand: ['ibs-no-such-program-x'] }], 'postStartCommand'),
      shell,
    );
    t.is(run.exitCode, 127);
  });

  test(`${shell}: named commands of an object run in parallel`, async (t) => {
    // Each waits for the file of the other: run one after the other, the first would give up (exit 9).
    const waitFor = (mine: string, other: string): string =>
      `touch ${mine}; i=0; while [ ! -e ${other} ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 9; sleep 0.01; done; echo ${mine} saw ${other}`;
    const run = await runScript(
      scriptOf(
        [{ postStartCommand: { a: waitFor('a', 'b'), b: ['sh', '-c', waitFor('b', 'a')] } }],
        'postStartCommand',
      ),
      shell,
    );
    t.is(run.exitCode, 0, run.stderr);
    t.true(run.stdout.includes('a saw b\n'));
    t.true(run.stdout.includes('b saw a\n'));
    t.deepEqual(run.files, ['a', 'b']);
  });

  test(`${shell}: parallel commands: waits for all, exits with the first failure in name order`, async (t) => {
    const run = await runScript(
      scriptOf([
        {
          id: 'f',
          postCreateCommand: {
            ok: 'exit 0',
            slow: 'sleep 0.3; touch slow-done',
            bad: 'exit 5',
            worse: ['sh', '-c', 'exit 6'],
          },
        },
        { postCreateCommand: 'touch never' },
      ]),
      shell,
    );
    t.is(run.exitCode, 5);
    t.deepEqual(run.files, ['slow-done']); // waited for the slow one; skipped the later entry
    t.is(
      run.stderr,
      "bad of postCreateCommand from Feature 'f' failed with exit code 5. Skipping any further user-provided commands.\n",
    );
  });

  test(`${shell}: label text is data: quotes, $(), backticks, newlines`, async (t) => {
    const words = [
      "it's",
      '"double"',
      '$(touch pwned1)',
      '`touch pwned2`',
      'line1\nline2',
      '$HOME',
      '\\n',
      ';touch pwned3;',
      '',
      "'",
    ];
    const hostileId = "x'; touch pwned4; echo '$(touch pwned5)";
    const run = await runScript(
      scriptOf([
        { id: hostileId, postCreateCommand: ['printf', '<%s>', ...words] },
        { postCreateCommand: { "n'$(touch pwned6)`x`": 'exit 4' } },
      ]),
      shell,
    );
    t.deepEqual(run.files, []);
    t.is(run.exitCode, 4);
    t.true(run.stdout.includes(words.map((w) => `<${w}>`).join('')));
    t.true(run.stdout.includes(`Running the postCreateCommand from Feature '${hostileId}'...\n`));
    t.true(run.stderr.startsWith("n'$(touch pwned6)`x` of postCreateCommand from devcontainer.json failed"));
  });

  test(`${shell}: a string command runs exactly as /bin/sh -c would run it`, async (t) => {
    const command = `printf '%s\\n' "it's" 'a"b' "$(echo sub)" \`echo tick\`\necho second line; echo "-x"`;
    const run = await runScript(scriptOf([{ postCreateCommand: command }]), shell);
    const direct = await execa('/bin/sh', ['-c', command], { stripFinalNewline: false });
    t.is(run.exitCode, 0, run.stderr);
    t.is(run.stdout, `Running the postCreateCommand from devcontainer.json...\n${direct.stdout}`);
  });
}

test('a command text starting with "-" is not an option of sh', async (t) => {
  const run = await runScript(scriptOf([{ postCreateCommand: '-x' }]));
  t.is(run.exitCode, 127); // "-x: not found", not xtrace
  t.notRegex(run.stderr, /requires an argument/);
});

test('whitespace-only, empty array and empty object commands run nothing, without warnings', async (t) => {
  const { script, warnings } = hookScript('postCreateCommand', [
    { postCreateCommand: '  \n ' },
    { postCreateCommand: [] },
    { postCreateCommand: {} },
    { postCreateCommand: 'echo real' },
  ]);
  t.deepEqual(warnings, []);
  const run = await runScript(script ?? '');
  t.is(run.stdout, 'Running the postCreateCommand from devcontainer.json...\nreal\n');
});

const UNSUPPORTED: [string, unknown][] = [
  ['a number', 42],
  ['true', true],
  ['an exec array with a number', ['echo', 1]],
  ['a NUL character', 'echo a\u0000b'],
  ['a program name starting with "-"', ['-rf', 'x']],
];
for (const [title, command] of UNSUPPORTED) {
  test(`unsupported command shape is skipped with a warning: ${title}`, async (t) => {
    const { script, warnings } = hookScript('postCreateCommand', [
      { id: 'feat', postCreateCommand: command },
      { postCreateCommand: 'echo kept' },
    ]);
    t.is(warnings.length, 1);
    t.is(warnings[0]?.code, 'skipped_command');
    t.regex(warnings[0]?.message ?? '', /postCreateCommand of Feature 'feat'/);
    const run = await runScript(script ?? '');
    t.is(run.exitCode, 0);
    t.is(run.stdout, 'Running the postCreateCommand from devcontainer.json...\nkept\n');
  });
}

test('an unsupported named command is skipped with a warning; the others run', async (t) => {
  const { script, warnings } = hookScript('postCreateCommand', [
    { postCreateCommand: { bad: 1, good: 'echo good' } },
  ]);
  t.deepEqual(
    warnings.map((w) => w.code),
    ['skipped_command'],
  );
  t.regex(warnings[0]?.message ?? '', /bad of postCreateCommand/);
  const run = await runScript(script ?? '');
  t.is(run.exitCode, 0);
  t.true(run.stdout.endsWith('good\n'));
});

test('scripts of different hooks are independent', (t) => {
  const { scripts } = lifecycleScripts([
    { onCreateCommand: 'echo on', postAttachCommand: ['echo', 'attach'] },
  ]);
  t.true(scripts.onCreateCommand?.includes("'echo on'"));
  t.false(scripts.onCreateCommand?.includes('attach'));
  t.is(scripts.updateContentCommand, null);
  t.is(scripts.postCreateCommand, null);
  t.is(scripts.postStartCommand, null);
  t.true(scripts.postAttachCommand?.includes("( exec 'echo' 'attach' )"));
});

test.after.always('scratch directories are removed', async () => {
  await Promise.all(scratchDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
