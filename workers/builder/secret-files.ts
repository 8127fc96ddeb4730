/**
 * The build secrets on disk, for the one `docker buildx build` of a request: a 0700 folder in the
 * request's directory, one 0600 file per secret named by its id (the id grammar makes it a plain
 * file name). The docker wrapper hands each to BuildKit as `--secret id=<id>,src=<file>`; only
 * the folder's path travels in the environment. The request directory's removal removes them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildSecret } from '../../src/rules/build-secret-rules.js';

/** Writes the secrets into `<requestRoot>/build-secrets/`; undefined (nothing written) when there are none. */
export async function writeSecretFiles(
  requestRoot: string,
  secrets: readonly BuildSecret[],
): Promise<string | undefined> {
  if (secrets.length === 0) return undefined;
  const dir = join(requestRoot, 'build-secrets');
  await mkdir(dir, { mode: 0o700 });
  for (const secret of secrets) {
    await writeFile(join(dir, secret.id), secret.value, { mode: 0o600, flag: 'wx' });
  }
  return dir;
}
