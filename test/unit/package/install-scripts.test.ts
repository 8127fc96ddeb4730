// npm 11 skips a dependency's install scripts unless package.json#allowScripts covers it, and warns
// after every `npm ci` about each one it does not cover. Each is decided in package.json: no warning.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

test('every dependency with install scripts is decided in allowScripts (npm ci warns of none)', async (t) => {
  const { stdout } = await run('npm', ['install-scripts', 'ls'], { cwd: ROOT, timeout: 240_000 });
  t.is(stdout.trim(), 'No packages with unreviewed install scripts.');
});
