import test from 'ava';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, testConfig } from '../../../helpers/app.js';

/**
 * A `git` whose clone succeeds (it only creates the target directory) and whose rev-parse
 * prints no commit id (every other command prints nothing and succeeds): everything after the
 * log is opened must still be answered with its id.
 */
const FAKE_GIT = `#!/bin/sh
for last; do :; done
case " $* " in
  *" clone "*) mkdir -p "$last"; echo "Cloning into '$last'..." >&2 ;;
  *" rev-parse "*) echo "not-a-commit"; echo "main" ;;
  *) : ;;
esac
`;

test('a clone whose rev-parse prints no commit answers 500 with the git log id, and the log says why', async (t) => {
  const bin = await mkdtemp(join(tmpdir(), 'ibs-fake-git-'));
  t.teardown(() => rm(bin, { recursive: true, force: true }));
  await writeFile(join(bin, 'git'), FAKE_GIT);
  await chmod(join(bin, 'git'), 0o755);
  const scratchDir = await mkdtemp(join(tmpdir(), 'ibs-test-'));
  t.teardown(() => rm(scratchDir, { recursive: true, force: true }));
  const { childEnv } = testConfig({ scratchDir });
  const app = await startApp({
    scratchDir,
    childEnv: { ...childEnv, PATH: `${bin}:${childEnv.PATH ?? '/usr/bin:/bin'}` },
  });
  t.teardown(app.close);

  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repository: 'https://git.example.com/org/app.git',
      image: { registry: 'r.example.com' },
    }),
  });
  t.is(res.status, 500);
  const body = (await res.json()) as { error?: string; logId?: string };
  t.is(body.error, 'git rev-parse HEAD --abbrev-ref HEAD printed unexpected output');
  t.regex(body.logId ?? '', /^git-/);

  const log = await fetch(`${app.url}/logs/${body.logId}`);
  t.is(log.status, 200);
  const text = await log.text();
  t.true(text.includes('not-a-commit'), text);
  t.true(text.trimEnd().endsWith('# git rev-parse HEAD --abbrev-ref HEAD printed unexpected output'), text);
});
