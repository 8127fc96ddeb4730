/**
 * ID tokens of the configured OIDC issuers, verified with jose: the issuer by its exact `iss`,
 * RS256 or ES256 only (never `none`, never an HMAC made with a public key), the audience, `exp`
 * and `nbf` with at most CLOCK_SKEW_SECONDS of skew. A refusal says why in a few words, never
 * with the token.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { AuthIssuer } from '../config/types.js';
import { IssuerKeys, IssuerKeysUnavailable, type IssuerKeysDeps } from './issuer-keys.js';

const ALGORITHMS = ['RS256', 'ES256'];
const CLOCK_SKEW_SECONDS = 60;

/** A token refused, and why (the words of TOKEN_INVALID). */
export class TokenRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** An issuer whose keys cannot be had now (ISSUER_UNAVAILABLE). */
export class IssuerUnavailable extends Error {
  constructor(readonly issuer: string) {
    super(issuer);
  }
}

export interface VerifiedToken {
  readonly issuer: AuthIssuer;
  readonly claims: JWTPayload;
}

/** Why jose refused a token, in the words of the answer. */
function refusalOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' || err.claim === 'iat') return 'not yet valid';
    if (err.claim === 'aud') return 'wrong audience';
    if (err.claim === 'iss') return 'wrong issuer';
    return `claim ${err.claim} is missing or invalid`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
  if (err instanceof errors.JWKSNoMatchingKey) return 'unknown signing key';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'no key id and several keys';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'unsupported algorithm';
  return 'malformed';
}

export class IdTokens {
  readonly #issuers: ReadonlyMap<string, { readonly entry: AuthIssuer; readonly keys: IssuerKeys }>;

  constructor(issuers: readonly AuthIssuer[], deps: (issuer: AuthIssuer) => IssuerKeysDeps) {
    this.#issuers = new Map(
      issuers.map((entry) => [entry.issuer, { entry, keys: new IssuerKeys(entry.issuer, deps(entry)) }]),
    );
  }

  /**
   * The token's issuer and claims once verified; throws TokenRefused or IssuerUnavailable.
   * `audience`: another audience than the issuer entry's (a person's ID token names the client id).
   */
  async verify(token: string, audience?: string): Promise<VerifiedToken> {
    let alg: unknown;
    let iss: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
      iss = decodeJwt(token).iss;
    } catch {
      throw new TokenRefused('malformed');
    }
    if (typeof alg !== 'string' || !ALGORITHMS.includes(alg)) throw new TokenRefused('unsupported algorithm');
    const issuer = typeof iss === 'string' ? this.#issuers.get(iss) : undefined;
    if (issuer === undefined) throw new TokenRefused('unknown issuer');
    try {
      const { payload } = await jwtVerify(token, issuer.keys.keyOf, {
        issuer: issuer.entry.issuer,
        audience: audience ?? issuer.entry.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp', 'sub'],
      });
      return { issuer: issuer.entry, claims: payload };
    } catch (err) {
      if (err instanceof IssuerKeysUnavailable) throw new IssuerUnavailable(issuer.entry.name);
      throw new TokenRefused(refusalOf(err));
    }
  }
}
