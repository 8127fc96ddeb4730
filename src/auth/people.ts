/**
 * Sign-in for people (docs/auth.md): the browser flow and its sessions. A sign-in's `state`, `nonce`
 * and PKCE verifier are HMACs of a seed kept only in the browser's sign-in cookie; the callback's ID
 * token is validated as a bearer token is, with the client id as audience; the session ends at the
 * token's expiry or after the configured hours. A session is kept by the HMAC of its id, its CSRF
 * token is another HMAC of the id (double submit); no id, seed, code or token is logged or kept.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { AuthIssuer } from '../config/types.js';
import { SignInRefused, type ProviderClient, type SignInChecks } from './provider-client.js';
import type { PersonSession, SessionStore } from './sessions.js';
import { TokenRefused, type VerifiedToken } from './id-tokens.js';

export interface PeopleSettings {
  readonly issuer: AuthIssuer;
  readonly clientId: string;
  readonly sessionHours: number;
}

export interface PeopleDeps {
  readonly store: SessionStore;
  readonly provider: Pick<ProviderClient, 'authorizationUrl' | 'exchange'>;
  /** Validates an ID token as a bearer token is, with `audience` (id-tokens.ts). */
  readonly verify: (token: string, audience: string) => Promise<VerifiedToken>;
  readonly now?: () => number;
}

/** A sign-in under way: the value of its cookie, and the page to come back to. */
export interface SignInStart {
  readonly location: string;
  readonly cookie: string;
}

export interface StartedSession {
  readonly sessionId: string;
  readonly csrfToken: string;
  readonly endsAt: number;
  readonly returnTo: string;
  readonly session: PersonSession;
}

/** A page of the service's own to come back to; anything else comes back to /ui/. */
const RETURN_TO = /^\/ui\/[A-Za-z0-9._~%/-]*(\?[A-Za-z0-9._~%&=+-]*)?$/;
export const safeReturnTo = (path: string | undefined): string =>
  path !== undefined && path.length <= 1024 && RETURN_TO.test(path) && !path.includes('//') ? path : '/ui/';

/** The claims a session keeps for the rules: strings and lists of strings, no token material. */
const NOT_KEPT = new Set([
  'nonce',
  'at_hash',
  'c_hash',
  's_hash',
  'sid',
  'aud',
  'azp',
  'iat',
  'exp',
  'nbf',
  'auth_time',
  'jti',
]);
function keptClaims(claims: JWTPayload): Record<string, string | readonly string[]> {
  const kept: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (NOT_KEPT.has(name)) continue;
    if (typeof value === 'string') kept[name] = value;
    else if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
      kept[name] = value as string[];
  }
  return kept;
}

const SEED = /^[A-Za-z0-9_-]{43}$/;
const hmac = (key: Buffer, purpose: string, value: string): string =>
  createHmac('sha256', key).update(`${purpose}\n${value}`).digest('base64url');
const sameText = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class PeopleSignIn {
  readonly #settings: PeopleSettings;
  readonly #deps: PeopleDeps;
  readonly #now: () => number;

  constructor(settings: PeopleSettings, deps: PeopleDeps) {
    this.#settings = settings;
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  get issuerName(): string {
    return this.#settings.issuer.name;
  }

  async #checks(seed: string): Promise<SignInChecks> {
    const key = await this.#deps.store.hmacKey();
    return {
      state: hmac(key, 'state', seed),
      nonce: hmac(key, 'nonce', seed),
      verifier: hmac(key, 'verifier', seed),
    };
  }

  /** A new sign-in: the provider's URL to send the browser to, and the sign-in cookie's value. */
  async begin(returnTo: string | undefined): Promise<SignInStart> {
    const seed = randomBytes(32).toString('base64url');
    const location = await this.#deps.provider.authorizationUrl(await this.#checks(seed));
    return { location, cookie: `${seed}.${Buffer.from(safeReturnTo(returnTo)).toString('base64url')}` };
  }

  /** The callback: every check, then a session; throws SignInRefused (or the provider's outage). */
  async finish(query: URLSearchParams, signInCookie: string | undefined): Promise<StartedSession> {
    const [seed, back] = (signInCookie ?? '').split('.');
    if (seed === undefined || !SEED.test(seed))
      throw new SignInRefused('no sign-in under way in this browser');
    const checks = await this.#checks(seed);
    if (!sameText(query.get('state') ?? '', checks.state))
      throw new SignInRefused('the state is not the one of this sign-in');
    const idToken = await this.#deps.provider.exchange(query, checks);
    const verified = await this.#verified(idToken, checks.nonce);
    const claims = verified.claims;
    const endsAt = Math.min(Number(claims.exp) * 1000, this.#now() + this.#settings.sessionHours * 3_600_000);
    if (!(endsAt > this.#now())) throw new SignInRefused('the ID token has expired');
    const session: PersonSession = {
      issuerName: this.#settings.issuer.name,
      issuer: this.#settings.issuer.issuer,
      subject: String(claims.sub),
      claims: keptClaims(claims),
      endsAt,
    };
    const sessionId = randomBytes(32).toString('base64url');
    const key = await this.#deps.store.hmacKey();
    await this.#deps.store.put(hmac(key, 'session', sessionId), session);
    return {
      sessionId,
      csrfToken: hmac(key, 'csrf', sessionId),
      endsAt,
      returnTo: safeReturnTo(Buffer.from(back ?? '', 'base64url').toString('utf8')),
      session,
    };
  }

  /** The ID token validated as a bearer token, with the client id as audience and this sign-in's nonce. */
  async #verified(idToken: string, nonce: string): Promise<VerifiedToken> {
    let verified: VerifiedToken;
    try {
      verified = await this.#deps.verify(idToken, this.#settings.clientId);
    } catch (err) {
      if (!(err instanceof TokenRefused)) throw err;
      throw new SignInRefused(
        err.reason === 'wrong audience'
          ? 'the ID token is for another client'
          : `the ID token is refused: ${err.reason}`,
      );
    }
    if (verified.issuer.name !== this.#settings.issuer.name)
      throw new SignInRefused('the ID token is of another issuer');
    if (typeof verified.claims.nonce !== 'string' || !sameText(verified.claims.nonce, nonce))
      throw new SignInRefused('the ID token has another nonce');
    return verified;
  }

  /** The session of `sessionId`, unless unknown or ended. */
  async session(sessionId: string): Promise<PersonSession | undefined> {
    if (!SEED.test(sessionId)) return undefined;
    const key = await this.#deps.store.hmacKey();
    return this.#deps.store.get(hmac(key, 'session', sessionId));
  }

  /** Whether `token` is the CSRF token of `sessionId`. */
  async csrfHolds(sessionId: string, token: string | undefined): Promise<boolean> {
    if (token === undefined) return false;
    const key = await this.#deps.store.hmacKey();
    return sameText(token, hmac(key, 'csrf', sessionId));
  }

  /** Ends the session of `sessionId` (sign-out). */
  async end(sessionId: string): Promise<void> {
    if (!SEED.test(sessionId)) return;
    const key = await this.#deps.store.hmacKey();
    await this.#deps.store.delete(hmac(key, 'session', sessionId));
  }
}
