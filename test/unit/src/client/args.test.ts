import test from 'ava';
import { OPTIONS, UsageError, helpText, optionsOf, parseCommandLine } from '../../../../src/client/args.js';

test('build: every option of the table parses, repeatable ones as lists, the server from IBS_SERVER', (t) => {
  const parsed = parseCommandLine(
    [
      'build',
      '--repository',
      'https://git.example/a.git',
      '--platform',
      'linux/amd64',
      '--platform',
      'linux/386',
      '--no-cache',
    ],
    { IBS_SERVER: 'http://svc:8080' },
  );
  if (parsed.kind !== 'run') return t.fail();
  t.is(parsed.command, 'build');
  t.is(parsed.values.repository, 'https://git.example/a.git');
  t.deepEqual(parsed.values.platform, ['linux/amd64', 'linux/386']);
  t.is(parsed.values['no-cache'], true);
  t.is(parsed.values.server, 'http://svc:8080');
});

test('--server wins over IBS_SERVER', (t) => {
  const parsed = parseCommandLine(['logs', 'git-1', '--server', 'http://a'], { IBS_SERVER: 'http://b' });
  t.is(parsed.kind === 'run' ? parsed.values.server : undefined, 'http://a');
});

test('an option of another command, an unknown option or command is a usage error', (t) => {
  t.throws(() => parseCommandLine(['logs', 'x', '--repository', 'r'], {}), { instanceOf: UsageError });
  t.throws(() => parseCommandLine(['build', '--git-token', 'secret'], {}), { instanceOf: UsageError });
  t.throws(() => parseCommandLine(['push'], {}), { instanceOf: UsageError, message: /unknown command/ });
  t.throws(() => parseCommandLine(['image', 'copy'], {}), { instanceOf: UsageError });
});

test('a usage error tells whether its command line asked for --json, read with the option table', (t) => {
  const jsonOf = (argv: string[]): boolean | undefined => {
    try {
      parseCommandLine(argv, {});
    } catch (err) {
      return err instanceof UsageError ? err.json : undefined;
    }
    return undefined;
  };
  t.true(jsonOf(['build', '--bogus', '--json']));
  t.true(jsonOf(['push', '--json']));
  t.false(jsonOf(['build', '--bogus']));
  // After `--`, --json is a positional: not asked for.
  t.false(jsonOf(['build', '--bogus', '--', '--json']));
});

test('no option can carry a credential: they come from the environment only', (t) => {
  for (const row of OPTIONS) t.false(/token|password|secret|username|credential/i.test(row.name), row.name);
});

test('--help of a command lists exactly its rows of the table; the general help lists all commands', (t) => {
  const parsed = parseCommandLine(['image', 'exists', '--help'], {});
  if (parsed.kind !== 'help') return t.fail();
  const flags = [...parsed.text.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
  t.deepEqual(
    flags,
    optionsOf('image exists').map((row) => row.name),
  );
  const all = helpText();
  for (const usage of ['ibs build', 'ibs image exists', 'ibs image delete', 'ibs devcontainer', 'ibs logs']) {
    t.true(all.includes(usage), usage);
  }
  t.regex(all, /IBS_GIT_TOKEN/);
  t.regex(all, /^ {2}IBS_TOKEN +the bearer token sent on every request/m);
  t.regex(all, /^ {2}IBS_OIDC_AUDIENCE +GitHub Actions/m);
  t.regex(all, /^ {2}130 /m);
  t.is(parseCommandLine([], {}).kind, 'help');
});
