/**
 * Masks the credentials ibs was given wherever they would be printed: the service masks its logs
 * itself, but nothing printed by ibs relies on that. Each secret is masked as given, URL-encoded
 * and inside the base64 of `user:secret` (the forms a log line could carry it in).
 */
import { encodeBasicAuth } from '../secrets/basic-auth.js';
import { MASK } from '../secrets/masking.js';

/** The strings to hide for one secret (and its user, for the Basic form). */
function formsOf(secret: string, user?: string): string[] {
  const forms = [secret, encodeURIComponent(secret)];
  if (user !== undefined) forms.push(encodeBasicAuth(user, secret));
  return forms;
}

export interface Secret {
  readonly value: string;
  readonly user?: string;
}

/** A function replacing every form of every secret in a text; longer forms first. */
export function masker(secrets: readonly Secret[]): (text: string) => string {
  const forms = [
    ...new Set(secrets.filter((s) => s.value.length > 0).flatMap((s) => formsOf(s.value, s.user))),
  ].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const form of forms) out = out.split(form).join(MASK);
    return out;
  };
}

/**
 * The secrets of one run of ibs, which can grow: an ID token fetched (or renewed) mid-run is
 * masked from then on. `mask` always applies every secret known so far.
 */
export class Masks {
  #secrets: Secret[];
  #mask: (text: string) => string;

  constructor(secrets: readonly Secret[] = []) {
    this.#secrets = [...secrets];
    this.#mask = masker(this.#secrets);
  }

  add(secret: Secret): void {
    if (secret.value === '' || this.#secrets.some((s) => s.value === secret.value)) return;
    this.#secrets = [...this.#secrets, secret];
    this.#mask = masker(this.#secrets);
  }

  readonly mask = (text: string): string => this.#mask(text);
}
