// `npx image-build-service --help` right after `npm ci`: npm ci runs the `prepare` script, which
// must produce every file the package's `bin` names. A copy of the sources without dist/ goes
// through that same script; then each bin entry exists, is an executable node script (npx runs the
// file itself: without the execute bit it answers Permission denied), and answers --help.
import test from 'ava';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** What a fresh clone has before `npm ci` that the build reads (no dist/). */
const SOURCES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'workers',
];

interface Manifest {
  name: string;
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
}

test('the prepare step (run by npm ci) builds every bin entry executable, and each answers --help', async (t) => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  t.truthy(manifest.scripts.prepare, 'package.json has a prepare script');
  const bins = Object.entries(manifest.bin);
  t.true(bins.length > 0);

  const copy = await mkdtemp(join(tmpdir(), 'ibs-prepare-'));
  t.teardown(() => rm(copy, { recursive: true, force: true }));
  for (const entry of SOURCES) await cp(join(ROOT, entry), join(copy, entry), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));

  await run('npm', ['run', '--silent', 'prepare'], { cwd: copy, timeout: 240_000 });
  // The CLI launcher (a CommonJS script the build emits beside the module that starts it).
  const launcher = await readFile(join(copy, 'dist/workers/builder/devcontainer-launcher.cjs'), 'utf8');
  t.true(launcher.includes('runInThisContext'), 'dist holds the CLI launcher');

  for (const [name, file] of bins) {
    const script = await readFile(join(copy, file), 'utf8');
    t.true(script.startsWith('#!/usr/bin/env node\n'), `${file} starts with a node shebang`);
    const mode = (await stat(join(copy, file))).mode & 0o777;
    t.is(mode & 0o111, 0o111, `${file} is executable by everyone (mode ${mode.toString(8)})`);
    const itself = await run(join(copy, file), ['--help'], { cwd: copy });
    const direct = await run(process.execPath, [join(copy, file), '--help'], { cwd: copy });
    t.true(direct.stdout.startsWith(`${manifest.name} ${manifest.version}\n`), direct.stdout);
    t.is(itself.stdout, direct.stdout);
    const viaNpx = await run('npx', ['--no-install', name, '--help'], { cwd: copy, timeout: 240_000 });
    t.is(viaNpx.stdout, direct.stdout);
  }
});
