/**
 * Who asked for something (docs/auth.md): the identity a build's record, its events and the audit
 * trail carry. Never a token: the ID token's `sub` and issuer, or the static token's name.
 */
type CallerKind = 'oidc' | 'token' | 'anonymous';

export interface RequestedBy {
  readonly kind: CallerKind;
  /** The `iss` of an ID token. */
  readonly issuer?: string;
  /** The ID token's `sub`, or the static token's name. */
  readonly subject: string;
  /** The configured issuer's or static token's name. */
  readonly name?: string;
}
