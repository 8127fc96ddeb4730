/**
 * Text encoded (UTF-8) straight into slabs and handed out as pieces: output that streams in many
 * chunks costs a few allocations instead of one per chunk, and a piece holds everything pushed
 * between two takes (within one slab), without a copy. A slab doubles from minBytes up to maxBytes
 * (a larger text gets a slab of its own size), so a slow writer holds little memory.
 */
export interface PieceEncoder {
  /** Appends `text`, whose UTF-8 length is `bytes` (Buffer.byteLength: the caller counts it anyway). */
  push(text: string, bytes: number): void;
  /** What was pushed since the last take, in order: views of slabs, never written again. */
  take(): Buffer[];
}

export function createPieceEncoder(minBytes: number, maxBytes: number): PieceEncoder {
  let slab = Buffer.alloc(0);
  let used = 0;
  let taken = 0;
  /** Untaken bytes of earlier (full) slabs. */
  const earlier: Buffer[] = [];
  return {
    push(text, bytes) {
      if (slab.length - used < bytes) {
        if (used > taken) earlier.push(slab.subarray(taken, used));
        slab = Buffer.allocUnsafe(Math.max(bytes, Math.min(maxBytes, Math.max(minBytes, slab.length * 2))));
        used = 0;
        taken = 0;
      }
      used += slab.write(text, used);
    },
    take() {
      const pieces = earlier.splice(0);
      if (used > taken) pieces.push(slab.subarray(taken, used));
      taken = used;
      return pieces;
    },
  };
}
