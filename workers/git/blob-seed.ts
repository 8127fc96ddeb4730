/**
 * The definition's own files from this instance's blob cache instead of a second fetch
 * (docs/behaviour.md, Clones). Before the checkout, when every blob of the definition's place is
 * cached, they are written into the clone with `git hash-object -w`, which computes their ids: a blob
 * whose id differs is not what the tree names, and the checkout fetches it as usual. After the
 * checkout the place's small regular files are remembered; links and large files never are.
 */
import { constants } from 'node:fs';
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inReadSet, type ReadPath } from '../builder/read-set.js';
import type { GitCapture } from './commit-definition.js';
import { isRegularFile, type TreeEntry } from './tree-listing.js';

/** Blob bytes by repository and object id (reuse/blob-cache.ts). */
export interface BlobStore {
  /** Larger blobs are not kept. */
  readonly maxBlobBytes: number;
  get(repository: string, objectId: string): Buffer | undefined;
  set(repository: string, objectId: string, bytes: Buffer): void;
}

/** A place with more files than this is fetched every time (reading it back would cost more). */
const MAX_PLACE_FILES = 100;

/** The blob entries of `place` in `listing`; undefined when one of them cannot be cached (a link). */
export function placeBlobs(
  listing: ReadonlyMap<string, TreeEntry>,
  place: readonly ReadPath[],
): TreeEntry[] | undefined {
  const entries = [...listing.values()].filter((e) => e.type === 'blob' && inReadSet(e.path, place));
  return entries.length <= MAX_PLACE_FILES && entries.every(isRegularFile) ? entries : undefined;
}

/**
 * Writes the cached bytes of `entries` into the clone's objects; true when all of them are there
 * now (nothing left for the checkout to fetch). `scratch`: a directory of the request for the files.
 */
export async function seedBlobs(
  git: GitCapture,
  blobs: BlobStore,
  repository: string,
  entries: readonly TreeEntry[],
  scratch: string,
): Promise<boolean> {
  const cached = entries.map((e) => blobs.get(repository, e.oid));
  if (entries.length === 0 || cached.some((b) => b === undefined)) return false;
  const dir = join(scratch, 'blob-seed');
  await mkdir(dir, { mode: 0o700 });
  try {
    const files = await Promise.all(
      cached.map(async (bytes, index) => {
        const file = join(dir, String(index));
        await writeFile(file, bytes ?? Buffer.alloc(0), { mode: 0o600 });
        return file;
      }),
    );
    const written = (await git(['hash-object', '-w', '--no-filters', '--', ...files])).trim().split('\n');
    return entries.every((e, index) => written[index] === e.oid);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Remembers the checked-out bytes of `entries` (regular files, read without following links). */
export async function rememberBlobs(
  blobs: BlobStore,
  repository: string,
  entries: readonly TreeEntry[],
  cloneDir: string,
): Promise<void> {
  await Promise.all(
    entries.map(async (entry) => {
      const file = await open(
        join(cloneDir, ...entry.path.split('/')),
        constants.O_RDONLY | constants.O_NOFOLLOW,
      ).catch(() => undefined);
      if (file === undefined) return;
      try {
        if ((await file.stat()).size <= blobs.maxBlobBytes)
          blobs.set(repository, entry.oid, await file.readFile());
      } finally {
        await file.close();
      }
    }),
  );
}
