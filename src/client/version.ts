/**
 * The package's version for `ibs --help` (read when asked, walking up from this module, src/client
 * or dist/src/client, to the package's own package.json). A copy of the service's lookup on
 * purpose: ibs imports nothing of the service.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'image-build-service';

export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: keep walking up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
