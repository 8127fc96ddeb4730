/**
 * Static bearer tokens, known only by the sha256 of each: a presented token is hashed and compared
 * in constant time with every configured digest, so neither the token nor which digest came close
 * is ever told.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthToken } from '../config/types.js';

export class StaticTokens {
  readonly #entries: readonly { readonly name: string; readonly digest: Buffer }[];

  constructor(tokens: readonly AuthToken[]) {
    this.#entries = tokens.map((t) => ({ name: t.name, digest: Buffer.from(t.sha256, 'hex') }));
  }

  /** The name of the configured token `token` is, or undefined. */
  nameOf(token: string): string | undefined {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let found: string | undefined;
    // Every entry is compared, found or not: the time taken tells nothing.
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.name;
    }
    return found;
  }
}
