/**
 * Output split into whole lines as it streams, on its bytes (never decoded on the way): each chunk
 * gives the complete lines it completes, and the line in progress is held until its newline. A
 * newline byte never occurs inside a multi-byte UTF-8 character, so no character is cut. Used by
 * the masking of a log (line-masker.ts: a secret split across chunks is still found) and by each
 * output stream of a command (exec/run.ts: the other stream never lands inside a line).
 */

const NEWLINE = 0x0a;

export interface LineSplitter {
  /**
   * The complete lines this chunk completes, in order (none, one or two pieces). Only the line
   * that began in earlier chunks is copied; the rest is a view of the chunk.
   */
  push(chunk: Uint8Array): Buffer[];
  /** Bytes of the line in progress. */
  held(): number;
  /** The line in progress up to its last whole character (a character's start stays held). */
  release(): Buffer;
  /** Everything held (the output ended). */
  end(): Buffer;
}

export function createLineSplitter(): LineSplitter {
  /** The line in progress (chunks without a newline). */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const hold = (parts: Buffer[]): void => {
    pending = parts;
    pendingBytes = parts.reduce((sum, part) => sum + part.length, 0);
  };
  return {
    push(chunk) {
      const data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const cut = data.lastIndexOf(NEWLINE);
      if (cut < 0) {
        if (data.length > 0) hold([...pending, data]);
        return [];
      }
      const pieces: Buffer[] = [];
      let from = 0;
      if (pending.length > 0) {
        // The line begun earlier, whole, then the chunk's other lines.
        from = data.indexOf(NEWLINE) + 1;
        pieces.push(Buffer.concat([...pending, data.subarray(0, from)]));
      }
      if (from <= cut) pieces.push(data.subarray(from, cut + 1));
      hold(cut + 1 < data.length ? [data.subarray(cut + 1)] : []);
      return pieces;
    },
    held: () => pendingBytes,
    release() {
      const line = Buffer.concat(pending);
      const whole = wholeCharacters(line);
      hold(whole < line.length ? [line.subarray(whole)] : []);
      return line.subarray(0, whole);
    },
    end() {
      const rest = Buffer.concat(pending);
      hold([]);
      return rest;
    },
  };
}

/** The length of `bytes` without an incomplete UTF-8 character at its end. */
function wholeCharacters(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] ?? 0;
    // A continuation byte: the character starts further back.
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}
