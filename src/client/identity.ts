/**
 * Who ibs is to the service: the bearer token sent on every request it makes (http.ts adds it).
 * `IBS_TOKEN` as given (a static token, or the ID token GitLab's `id_tokens:` puts there); else,
 * in GitHub Actions with `IBS_OIDC_AUDIENCE` set, an ID token asked of the runner the documented
 * way (`GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=...` with `Authorization: bearer
 * $ACTIONS_ID_TOKEN_REQUEST_TOKEN`, answered `{"value": "<jwt>"}`), asked again shortly before it
 * expires (a build outlives it). No token is ever printed: each is given to the masks first.
 */
import type { Env } from './env.js';
import { Unreachable, call, jsonOf, answerReason, type Answer } from './http.js';

/** ibs could not get the token it was told to send (exit 2). */
export class IdentityError extends Error {}

/** An ID token is asked for again when it expires within this long. */
const RENEW_BEFORE_MS = 60_000;
/** How long the runner's token endpoint may stay silent. */
const ENDPOINT_IDLE_MS = 30_000;

/** What a bearer token may hold (visible ASCII): anything else could not go in a header. */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;

const set = (value: string | undefined): value is string => value !== undefined && value !== '';

/** The URL asking the Actions token endpoint for `audience` (the URL usually has a query already). */
export function actionsTokenUrl(requestUrl: string, audience: string): URL {
  const separator = requestUrl.includes('?') ? '&' : '?';
  try {
    return new URL(`${requestUrl}${separator}audience=${encodeURIComponent(audience)}`);
  } catch {
    throw new IdentityError('ACTIONS_ID_TOKEN_REQUEST_URL is not a URL');
  }
}

/** The `exp` of a JWT, in ms, or undefined (not a JWT, or no expiry): read, never verified. */
export function expiryOf(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const exp = (claims as { exp?: unknown } | null)?.exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export interface Identity {
  /** Where the token comes from, for messages: `IBS_TOKEN` or `a GitHub Actions ID token`. */
  readonly source: string;
  /** The token to send now (an ID token is renewed when it is about to expire). */
  token(): Promise<string>;
}

/** The secrets of the environment that prove identity (masked from the start). */
export function identitySecretsOf(env: Env): string[] {
  return [env.IBS_TOKEN, env.ACTIONS_ID_TOKEN_REQUEST_TOKEN].filter(set);
}

/** Asks the Actions token endpoint for an ID token once. */
async function requestIdToken(url: URL, requestToken: string, audience: string): Promise<string> {
  const why = `GitHub Actions gave no ID token for audience "${audience}"`;
  let answer: Answer;
  try {
    answer = await call(url, {
      headers: { authorization: `bearer ${requestToken}`, accept: 'application/json' },
      idleMs: ENDPOINT_IDLE_MS,
    });
  } catch (err) {
    if (err instanceof Unreachable) throw new IdentityError(`${why}: ${err.message}`);
    throw err;
  }
  if (answer.status !== 200)
    throw new IdentityError(`${why}: its token endpoint answered ${answer.status}: ${answerReason(answer)}`);
  const value = jsonOf(answer)?.value;
  if (typeof value !== 'string' || !HEADER_TOKEN.test(value))
    throw new IdentityError(`${why}: the answer of its token endpoint carries no "value" ibs can send`);
  return value;
}

/** An ID token of the runner, renewed shortly before it expires. */
class ActionsIdentity implements Identity {
  readonly source = 'a GitHub Actions ID token';
  readonly #url: URL;
  readonly #requestToken: string;
  readonly #audience: string;
  readonly #learned: (token: string) => void;
  #current: { readonly token: string; readonly expires: number | undefined } | undefined;
  #renewing: Promise<string> | undefined;

  constructor(env: Env, audience: string, learned: (token: string) => void) {
    this.#url = actionsTokenUrl(env.ACTIONS_ID_TOKEN_REQUEST_URL ?? '', audience);
    this.#requestToken = env.ACTIONS_ID_TOKEN_REQUEST_TOKEN ?? '';
    this.#audience = audience;
    this.#learned = learned;
  }

  async token(): Promise<string> {
    const current = this.#current;
    if (current !== undefined && (current.expires ?? Infinity) - Date.now() > RENEW_BEFORE_MS)
      return current.token;
    this.#renewing ??= this.#fetch().finally(() => (this.#renewing = undefined));
    try {
      return await this.#renewing;
    } catch (err) {
      // The first token, or one already expired: nothing to fall back on.
      if (current === undefined) throw err;
      if ((current.expires ?? Infinity) > Date.now()) return current.token;
      throw new Unreachable(`could not renew the GitHub Actions ID token: ${(err as Error).message}`, false);
    }
  }

  async #fetch(): Promise<string> {
    const token = await requestIdToken(this.#url, this.#requestToken, this.#audience);
    this.#learned(token);
    this.#current = { token, expires: expiryOf(token) };
    return token;
  }
}

/**
 * The identity of the environment, or undefined when ibs calls anonymously. `learned` is told each
 * token ibs fetches, before it is used (so it is masked). An Actions identity asked for but
 * impossible is an IdentityError.
 */
export function identityOf(env: Env, learned: (token: string) => void): Identity | undefined {
  if (set(env.IBS_TOKEN)) {
    // A token read from a file or a Secret often ends with a newline; a header cannot carry one.
    const token = env.IBS_TOKEN.trim();
    if (!HEADER_TOKEN.test(token))
      throw new IdentityError(
        'IBS_TOKEN holds characters a header cannot carry (spaces, control characters)',
      );
    learned(token);
    return { source: 'IBS_TOKEN', token: () => Promise.resolve(token) };
  }
  if (!set(env.IBS_OIDC_AUDIENCE)) return undefined;
  const missing = ['ACTIONS_ID_TOKEN_REQUEST_URL', 'ACTIONS_ID_TOKEN_REQUEST_TOKEN'].filter(
    (name) => !set(env[name]),
  );
  if (missing.length > 0)
    throw new IdentityError(
      `IBS_OIDC_AUDIENCE is set but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not: ` +
        'outside GitHub Actions set IBS_TOKEN; in GitHub Actions give the job `permissions: id-token: write`',
    );
  return new ActionsIdentity(env, env.IBS_OIDC_AUDIENCE, learned);
}

/** The text of a 401 or 403 answer to `what` (e.g. `POST /build`), naming what to do about it. */
export function refusalOf(what: string, answer: Answer, tokenSent: boolean): string {
  const reason = answerReason(answer);
  if (answer.status === 403) return `${what} was not allowed for this identity (403): ${reason}`;
  if (!tokenSent)
    return (
      `${what} needs a token (401): ${reason}; ` +
      'set IBS_TOKEN, or IBS_OIDC_AUDIENCE in GitHub Actions (docs/ci.md#identity)'
    );
  const header = answer.headers['www-authenticate'];
  const challenge = Array.isArray(header) ? header.join(', ') : (header ?? '');
  const error = /error="([^"]*)"/.exec(challenge)?.[1];
  return `${what}: the token was refused (401${error === undefined ? '' : `, ${error}`}): ${reason}`;
}

/** Whether a status is the service refusing who ibs is (exit 2, never retried). */
export const isRefusal = (status: number): boolean => status === 401 || status === 403;
