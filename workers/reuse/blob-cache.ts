/**
 * The bytes of small git blobs the key reads (config files, Dockerfiles), by repository and object
 * id, as a build on this instance read them from its checkout. Content-addressed (an object id
 * names its content), scoped per repository (nothing read from one repository answers for
 * another), bounded in entries and bytes (oldest first out). It lets an unchanged push compute
 * its build key from the commit's trees alone, without fetching any file (see tree-key.ts).
 */
const MAX_ENTRIES = 1000;
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;
/** Larger blobs are not kept (a config or Dockerfile is a few KiB). */
const MAX_BLOB_BYTES = 256 * 1024;

export class BlobCache {
  readonly maxBlobBytes = MAX_BLOB_BYTES;
  private readonly entries = new Map<string, Buffer>();
  private total = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxTotalBytes = MAX_TOTAL_BYTES,
  ) {}

  private static keyOf(repository: string, objectId: string): string {
    return JSON.stringify([repository, objectId]);
  }

  get(repository: string, objectId: string): Buffer | undefined {
    return this.entries.get(BlobCache.keyOf(repository, objectId));
  }

  set(repository: string, objectId: string, bytes: Buffer): void {
    if (bytes.length > this.maxBlobBytes) return;
    const key = BlobCache.keyOf(repository, objectId);
    const known = this.entries.get(key);
    if (known !== undefined) {
      this.entries.delete(key);
      this.total -= known.length;
    }
    this.entries.set(key, bytes);
    this.total += bytes.length;
    while (this.entries.size > this.maxEntries || this.total > this.maxTotalBytes) {
      const oldest = this.entries.entries().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest[0]);
      this.total -= oldest[1].length;
    }
  }
}
