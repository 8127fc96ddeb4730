/**
 * The few members of `oidc-provider` (which ships no types) the tests' provider uses
 * (test/helpers/oidc-provider.ts).
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface ProviderClientMetadata {
    readonly clientId: string;
  }
  interface ProviderAccount {
    readonly accountId: string;
    claims(): Record<string, unknown>;
  }
  export interface ProviderConfiguration {
    readonly clients: readonly Record<string, unknown>[];
    readonly jwks: { readonly keys: readonly Record<string, unknown>[] };
    readonly cookies: { readonly keys: readonly string[] };
    readonly pkce: { readonly required: () => boolean; readonly methods: readonly string[] };
    readonly scopes: readonly string[];
    readonly claims: Readonly<Record<string, readonly string[]>>;
    readonly conformIdTokenClaims: boolean;
    readonly ttl: {
      readonly IdToken: (ctx: unknown, token: unknown, client: ProviderClientMetadata) => number;
    };
    readonly findAccount: (ctx: unknown, id: string) => ProviderAccount | undefined;
  }
  export default class Provider {
    constructor(issuer: string, configuration: ProviderConfiguration);
    on(event: string, listener: (...args: never[]) => void): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
