/**
 * The per-request directory in the scratch space: `<scratch>/requests/<uuid>/` (0700) with
 * `home/` (HOME and tool caches of this request's commands), `git/` (clone credentials,
 * removed right after the clone), `docker/` (this request's DOCKER_CONFIG) and `src/` (the clone).
 * Removed whole when the request ends, whatever the outcome.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface RequestDir {
  readonly root: string;
  readonly home: string;
  readonly gitSecrets: string;
  readonly dockerConfig: string;
  /** Where git clones to (created by git). */
  readonly clone: string;
  /** Generated files outside the clone (e.g. the fallback definition). */
  readonly generated: string;
}

export async function createRequestDir(scratchDir: string): Promise<RequestDir> {
  const requests = join(scratchDir, 'requests');
  await mkdir(requests, { recursive: true, mode: 0o700 });
  const root = join(requests, randomUUID());
  const dir: RequestDir = {
    root,
    home: join(root, 'home'),
    gitSecrets: join(root, 'git'),
    dockerConfig: join(root, 'docker'),
    clone: join(root, 'src'),
    generated: join(root, 'generated'),
  };
  await mkdir(root, { mode: 0o700 });
  for (const sub of [dir.home, dir.gitSecrets, dir.dockerConfig, dir.generated])
    await mkdir(sub, { mode: 0o700 });
  return dir;
}

/** Never throws: a leftover directory must not turn a result into an error. */
export async function removeRequestDir(dir: RequestDir): Promise<void> {
  await rm(dir.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
}
