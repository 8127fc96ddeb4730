/**
 * Masking of a command's output as it streams, on its bytes (never decoded on the way: the log
 * holds what the command printed): whole lines only (line-splitter.ts), so that a secret split
 * across two chunks is still found; the last partial line is masked when the output ends.
 */
import { createLineSplitter } from './line-splitter.js';
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

export function createLineMasker(secrets: readonly string[]): LineMasker {
  let variants = secretVariants(secrets);
  let bytes = byteVariants(variants);
  const lines = createLineSplitter();
  return {
    push(chunk) {
      const pieces = lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      return pieces.map((piece) => maskBytes(piece, bytes));
    },
    end() {
      const rest = lines.end();
      return rest.length === 0 ? [] : [maskBytes(rest, bytes)];
    },
    addSecrets(more) {
      variants = secretVariants([...variants, ...more]);
      bytes = byteVariants(variants);
    },
  };
}
