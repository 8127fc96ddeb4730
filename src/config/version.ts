/** The service's own package version (read once from package.json; it has no setting). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'image-build-service';
let cached: string | undefined;

/** Walks up from this module (src/config or dist/src/config) to the package's own package.json. */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // not here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json of ${PACKAGE_NAME} not found`);
    dir = parent;
  }
}
