// `npm run stack -- up` on a machine without a prerequisite: the real stack CLI, run with a PATH
// that holds every program the stack spawns except docker-registry, names what is missing and the
// install command, exits 1 without a stack trace, and starts nothing.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { INSTALL_COMMAND, PREREQUISITES } from '../../stack/prerequisites.js';
import { baseEnv } from '../../stack/proc.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MISSING = 'docker-registry';

function which(program: string): string | undefined {
  for (const dir of (baseEnv().PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, program);
    if (dir !== '' && fs.existsSync(file)) return file;
  }
  return undefined;
}

test('up without docker-registry names it and the install command, exit 1, nothing started', (t) => {
  const scratch = fs.mkdtempSync(path.join(tmpdir(), 'ibs-prereq-'));
  const bin = path.join(scratch, 'bin');
  const stackDir = path.join(scratch, 'stack');
  fs.mkdirSync(bin);
  const linked: string[] = [];
  for (const p of PREREQUISITES) {
    if (p.present || path.isAbsolute(p.what) || p.what === MISSING) continue;
    const file = which(p.what);
    if (file === undefined) continue;
    fs.symlinkSync(file, path.join(bin, p.what));
    linked.push(p.what);
  }
  t.teardown(() => {
    if (fs.existsSync(stackDir)) {
      // Only when the check failed to stop `up`: stop what it started.
      spawnSync(process.execPath, ['--import', 'tsx', 'test/stack/cli.ts', 'down'], {
        cwd: ROOT,
        env: { ...process.env, IBS_STACK_DIR: stackDir },
      });
    }
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const res = spawnSync(process.execPath, ['--import', 'tsx', 'test/stack/cli.ts', 'up'], {
    cwd: ROOT,
    env: { PATH: bin, HOME: scratch, IBS_STACK_DIR: stackDir },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${res.stdout}${res.stderr}`;
  t.is(res.status, 1, output);
  const lines = res.stderr.split('\n');
  t.true(
    lines.some((l) => l.trim().startsWith(`${MISSING} `)),
    output,
  );
  t.true(res.stderr.includes(`Install them with: ${INSTALL_COMMAND}`), output);
  for (const present of linked) {
    t.false(
      lines.some((l) => l.trim().startsWith(`${present} `)),
      `${present} is on the PATH but reported missing`,
    );
  }
  t.notRegex(output, /^\s+at /m, 'no stack trace');
  t.notRegex(output, /ENOENT/);
  t.false(fs.existsSync(stackDir), 'up created the stack dir');
});
