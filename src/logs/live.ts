/**
 * Logs still being written, for the embedded store: a change counter bumped each time masked
 * text reaches the file, and followers that read the file from its start, waking on each change,
 * until the log is complete. A follower reads what the file holds, so it gets exactly the stored
 * bytes in order.
 */
import { open } from 'node:fs/promises';
import { ChangeCounter } from '../redis/change-counter.js';

/**
 * A log being written: its counter is bumped each time text reached the file, and once more when
 * the log is complete.
 */
export class LiveLog extends ChangeCounter {
  #complete = false;

  /** The writer closed the file: nothing more will come. */
  ended(): void {
    this.#complete = true;
    this.changed();
  }

  get isComplete(): boolean {
    return this.#complete;
  }
}

const CHUNK_BYTES = 64 * 1024;

/**
 * The bytes of a log file from offset 0: everything there is, then (while `live` is not
 * complete) each new piece as it arrives. `live` undefined: the file was complete already.
 * The file is opened on the first read (an iteration never started holds nothing) and closed
 * when the iteration ends, however it ends; a file deleted meanwhile ends the iteration.
 */
export async function* followFile(
  path: string,
  live: LiveLog | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  let position = 0;
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (handle === undefined) return;
  try {
    while (!signal?.aborted) {
      // Read the state before reading the file: what arrives meanwhile bumps the version.
      const complete = live === undefined || live.isComplete;
      const seen = live?.version ?? 0;
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead > 0) {
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
        continue;
      }
      if (complete) return;
      await live?.changeSince(seen, signal);
    }
  } finally {
    await handle.close();
  }
}
