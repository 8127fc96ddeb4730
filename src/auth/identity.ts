/**
 * A caller as the access rules see it: how it proved who it is (an ID token of a configured
 * issuer, a static token, or nothing when identities are off), its claims, and the record of it
 * that builds and the audit trail keep (never the token).
 */
import type { RequestedBy } from '../rules/caller.js';

export interface Identity {
  readonly requestedBy: RequestedBy;
  /** The configured issuer (by name) whose ID token it presented. */
  readonly issuerName?: string;
  /** The configured static token (by name) it presented. */
  readonly tokenName?: string;
  /** The ID token's claims ({} for a static token). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Every caller while identities are off. */
export const ANONYMOUS: Identity = Object.freeze({
  requestedBy: Object.freeze({ kind: 'anonymous', subject: 'anonymous' }),
  claims: Object.freeze({}),
});
