/**
 * Masking of a command's output as it streams: whole lines only, so that a secret split across
 * two chunks is still found; the last partial line is masked when the output ends.
 */
import { maskSecrets, secretVariants } from './masking.js';

export interface LineMasker {
  /** The masked complete lines this chunk completes ('' when none). */
  push(chunk: string | Uint8Array): string;
  /** The masked rest (the last line without its newline), once the output has ended. */
  end(): string;
  addSecrets(secrets: readonly string[]): void;
}

export function createLineMasker(secrets: readonly string[]): LineMasker {
  let variants = secretVariants(secrets);
  let pending = '';
  const decoder = new TextDecoder();
  return {
    push(chunk) {
      pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      const cut = pending.lastIndexOf('\n');
      if (cut < 0) return '';
      const lines = pending.slice(0, cut + 1);
      pending = pending.slice(cut + 1);
      return maskSecrets(lines, variants);
    },
    end() {
      pending += decoder.decode();
      const rest = pending;
      pending = '';
      return rest === '' ? '' : maskSecrets(rest, variants);
    },
    addSecrets(more) {
      variants = secretVariants([...variants, ...more]);
    },
  };
}
