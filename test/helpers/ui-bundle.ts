/**
 * The web pages' bundle as the package ships it: built once per test process with the package's
 * own script (`npm run build:ui`, esbuild) into dist/ui, where the service serves it from.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
let built = false;

/** Builds dist/ui once (a fraction of a second); the path of the folder. */
export function buildUiBundle(): string {
  if (!built) {
    execFileSync('npm', ['run', '--silent', 'build:ui'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    built = true;
  }
  return join(ROOT, 'dist', 'ui');
}
