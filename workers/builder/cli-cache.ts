/**
 * Carries the Dev Containers CLI's control manifest (`control-manifest.json`, the feature
 * advisories it refreshes every 5 minutes from containers.dev) across builds. The CLI keeps it
 * in `<TMPDIR>/devcontainercli-<user>/`, and each build has its own TMPDIR, so without this every
 * build would re-fetch it (and, offline, wait for the lookup to fail). Before a build the shared
 * copy is seeded with its timestamps (so the CLI's own 5-minute freshness rule still applies);
 * after it, a newer copy is saved back atomically. Never fails a build.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, rename, stat, utimes } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';

const FILE = 'control-manifest.json';

function cliCacheDir(tmpDir: string): string | undefined {
  try {
    return join(tmpDir, `devcontainercli-${userInfo().username}`);
  } catch {
    return undefined;
  }
}

const sharedFile = (scratchDir: string): string => join(scratchDir, 'devcontainer-cli', FILE);

async function copyWithTimes(from: string, to: string): Promise<void> {
  const times = await stat(from);
  const partial = `${to}.${randomUUID()}`;
  await copyFile(from, partial);
  await utimes(partial, times.atime, times.mtime);
  await rename(partial, to);
}

export async function seedCliCache(tmpDir: string, scratchDir: string): Promise<void> {
  const dir = cliCacheDir(tmpDir);
  if (dir === undefined) return;
  try {
    await stat(sharedFile(scratchDir));
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await copyWithTimes(sharedFile(scratchDir), join(dir, FILE));
  } catch {
    // nothing cached yet
  }
}

export async function saveCliCache(tmpDir: string, scratchDir: string): Promise<void> {
  const dir = cliCacheDir(tmpDir);
  if (dir === undefined) return;
  try {
    const fresh = await stat(join(dir, FILE));
    const shared = await stat(sharedFile(scratchDir)).catch(() => undefined);
    if (shared !== undefined && shared.mtimeMs >= fresh.mtimeMs) return;
    await mkdir(join(scratchDir, 'devcontainer-cli'), { recursive: true, mode: 0o700 });
    await copyWithTimes(join(dir, FILE), sharedFile(scratchDir));
  } catch {
    // the CLI wrote none: nothing to keep
  }
}
