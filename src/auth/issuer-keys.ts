/**
 * The signing keys of one OIDC issuer: its discovery document and key set fetched once and kept.
 * A token naming a key the set lacks (a rotation) fetches again, at most once in
 * REFETCH_COOLDOWN_MS however many forged tokens arrive; an old set is renewed beside the
 * requests. A failed fetch keeps the keys already had: an outage stops nothing signed with a
 * known key. Only https (a private CA: NODE_EXTRA_CA_CERTS). docs/auth.md.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet } from 'jose';
import type { JWSHeaderParameters, FlattenedJWSInput } from 'jose';

const REFETCH_COOLDOWN_MS = 30_000;
const MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 512 * 1024;

type KeyLookup = ReturnType<typeof createLocalJWKSet>;
export type KeyOf = (header: JWSHeaderParameters, token: FlattenedJWSInput) => ReturnType<KeyLookup>;

/** The issuer's keys cannot be had and none was fetched before. */
export class IssuerKeysUnavailable extends Error {}
/** A discovery document or key set that cannot be used (logged, never answered). */
class KeySetUnreadable extends Error {}

export interface IssuerKeysDeps {
  readonly fetch: typeof fetch;
  readonly now: () => number;
  /** Told of each fetch of the discovery document and key set, and how it went. */
  readonly fetched: (ok: boolean, err?: unknown) => void;
}

async function json(fetcher: typeof fetch, url: string): Promise<unknown> {
  const response = await fetcher(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new KeySetUnreadable(`${url} answered ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_DOCUMENT_BYTES)
    throw new KeySetUnreadable(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  return JSON.parse(text) as unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class IssuerKeys {
  readonly #issuer: string;
  readonly #deps: IssuerKeysDeps;
  #keys: KeyLookup | undefined;
  #jwksUri: string | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #triedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | undefined;

  constructor(issuer: string, deps: IssuerKeysDeps) {
    this.#issuer = issuer;
    this.#deps = deps;
  }

  /** jose's key lookup for a token of this issuer. */
  readonly keyOf: KeyOf = async (header, token) => {
    const now = this.#deps.now();
    if (this.#keys === undefined) {
      if (now - this.#triedAt >= REFETCH_COOLDOWN_MS) await this.#refresh();
      if (this.#keys === undefined) throw new IssuerKeysUnavailable(this.#issuer);
    } else if (now - this.#fetchedAt > MAX_AGE_MS && now - this.#triedAt >= REFETCH_COOLDOWN_MS) {
      void this.#refresh();
    }
    try {
      return await this.#keys(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      if (this.#deps.now() - this.#triedAt < REFETCH_COOLDOWN_MS) throw err;
      await this.#refresh();
      return await this.#keys(header, token);
    }
  };

  /** One fetch at a time; a failure keeps the keys already had. */
  #refresh(): Promise<void> {
    this.#refreshing ??= this.#fetchKeys().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #fetchKeys(): Promise<void> {
    this.#triedAt = this.#deps.now();
    try {
      this.#jwksUri ??= await this.#discover();
      const set = await json(this.#deps.fetch, this.#jwksUri);
      if (!isObject(set) || !Array.isArray(set.keys)) throw new KeySetUnreadable('the key set has no keys');
      this.#keys = createLocalJWKSet(set as unknown as JSONWebKeySet);
      this.#fetchedAt = this.#deps.now();
      this.#deps.fetched(true);
    } catch (err) {
      this.#deps.fetched(false, err);
    }
  }

  /** The key set's URL from the discovery document, which must name this issuer exactly. */
  async #discover(): Promise<string> {
    const url = `${this.#issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const document = await json(this.#deps.fetch, url);
    if (!isObject(document) || document.issuer !== this.#issuer)
      throw new KeySetUnreadable('the discovery document names another issuer');
    const jwksUri = document.jwks_uri;
    if (typeof jwksUri !== 'string' || !jwksUri.startsWith('https://'))
      throw new KeySetUnreadable('the discovery document has no https jwks_uri');
    return jwksUri;
  }
}
