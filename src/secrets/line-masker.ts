/**
 * Masking of a command's output as it streams, on its bytes (never decoded on the way: the log
 * holds what the command printed): whole lines only, so that a secret split across two chunks is
 * still found; the last partial line is masked when the output ends. A line ends at a newline
 * byte, which never occurs inside a multi-byte UTF-8 character, so no character is cut. A log is
 * read as text: a NUL byte (the entry separator of `git ls-tree -z`) is stored as a newline.
 */
import { byteVariants, maskBytes, secretVariants } from './masking.js';

export interface LineMasker {
  /**
   * The masked complete lines this chunk completes, in order (none, one or two pieces). Only the
   * line that began in earlier chunks is copied; the rest is a view of the chunk where it holds no
   * secret.
   */
  push(chunk: string | Uint8Array): Buffer[];
  /** The masked rest (the last line without its newline), once the output has ended. */
  end(): Buffer[];
  addSecrets(secrets: readonly string[]): void;
}

const NEWLINE = 0x0a;
const NUL = 0x00;

/** The chunk's bytes, NUL bytes as newlines (a copy only when there is one: never the caller's). */
function readableBytes(chunk: string | Uint8Array): Buffer {
  const data =
    typeof chunk === 'string'
      ? Buffer.from(chunk)
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let nul = data.indexOf(NUL);
  if (nul < 0) return data;
  const copy = Buffer.from(data);
  for (; nul >= 0; nul = copy.indexOf(NUL, nul + 1)) copy[nul] = NEWLINE;
  return copy;
}

export function createLineMasker(secrets: readonly string[]): LineMasker {
  let variants = secretVariants(secrets);
  let bytes = byteVariants(variants);
  /** The current line's bytes so far (chunks without a newline). */
  let pending: Buffer[] = [];
  return {
    push(chunk) {
      const data = readableBytes(chunk);
      const cut = data.lastIndexOf(NEWLINE);
      if (cut < 0) {
        if (data.length > 0) pending.push(data);
        return [];
      }
      const pieces: Buffer[] = [];
      let from = 0;
      if (pending.length > 0) {
        // The line begun earlier, whole (a secret may span the chunks), then the chunk's other lines.
        from = data.indexOf(NEWLINE) + 1;
        pieces.push(maskBytes(Buffer.concat([...pending, data.subarray(0, from)]), bytes));
      }
      if (from <= cut) pieces.push(maskBytes(data.subarray(from, cut + 1), bytes));
      pending = cut + 1 < data.length ? [data.subarray(cut + 1)] : [];
      return pieces;
    },
    end() {
      const rest = Buffer.concat(pending);
      pending = [];
      return rest.length === 0 ? [] : [maskBytes(rest, bytes)];
    },
    addSecrets(more) {
      variants = secretVariants([...variants, ...more]);
      bytes = byteVariants(variants);
    },
  };
}
