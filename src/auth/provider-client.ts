/**
 * The service as an OpenID Connect client of the people's provider, with openid-client: discovery
 * once (kept; tried again on the next sign-in after a failure), the authorization URL of the code
 * flow with PKCE (S256), `state` and `nonce`, and the code's exchange at the token endpoint, which
 * checks `state`, the verifier (the provider does), the ID token's audience and `nonce`. A client
 * secret when one is given, else a public client. Never logs or returns a secret.
 */
import type * as OpenIdClient from 'openid-client';

type Oidc = typeof OpenIdClient;
/** Loaded at the first sign-in: an instance without people's sign-in never loads the client. */
const loadOidc = (): Promise<Oidc> => import('openid-client');

/** What the client is: the provider, who the service is at it, where the browser comes back. */
export interface ProviderClientSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly redirectUrl: string;
  readonly scopes: readonly string[];
}

/** The values one sign-in is bound to (derived from its seed: people.ts). */
export interface SignInChecks {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
}

/** The provider cannot be reached now. */
export class ProviderUnavailable extends Error {}
/** The provider or the answer refused the sign-in, and why in a few words (never a value of it). */
export class SignInRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const ERROR_CODE = /^[a-z_]{1,64}$/;

/** Why openid-client refused an answer, in the words of SIGN_IN_REFUSED. */
function refusalOf(oidc: Oidc, err: unknown): SignInRefused | ProviderUnavailable {
  if (err instanceof oidc.AuthorizationResponseError)
    return new SignInRefused(`the provider answered ${ERROR_CODE.test(err.error) ? err.error : 'an error'}`);
  if (err instanceof oidc.ResponseBodyError)
    return new SignInRefused(
      err.error === 'invalid_grant'
        ? 'the provider refused the code (used before, or another verifier)'
        : `the provider answered ${ERROR_CODE.test(err.error) ? err.error : 'an error'}`,
    );
  const code = (err as { code?: unknown }).code;
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    // openid-client wraps oauth4webapi's error: the claim is in the cause, or the cause's cause.
    const cause = (err as { cause?: { claim?: unknown; cause?: { claim?: unknown } } }).cause;
    const claim = cause?.claim ?? cause?.cause?.claim;
    if (claim === 'nonce') return new SignInRefused('the ID token has another nonce');
    if (claim === 'aud') return new SignInRefused('the ID token is for another client');
    return new SignInRefused(`the ID token's ${typeof claim === 'string' ? claim : 'claims'} do not match`);
  }
  if (code === 'OAUTH_INVALID_RESPONSE' || code === 'OAUTH_RESPONSE_IS_NOT_CONFORM')
    return new SignInRefused('the provider answered what a sign-in cannot use');
  if (err instanceof TypeError || err instanceof DOMException || code === 'OAUTH_TIMEOUT')
    return new ProviderUnavailable('the provider cannot be reached');
  return new SignInRefused('the answer cannot be used');
}

export class ProviderClient {
  readonly #settings: ProviderClientSettings;
  readonly #fetch: typeof fetch | undefined;
  #configuration: Promise<OpenIdClient.Configuration> | undefined;

  constructor(settings: ProviderClientSettings, fetcher?: typeof fetch) {
    this.#settings = settings;
    this.#fetch = fetcher;
  }

  /** The provider's metadata, discovered once. */
  #discovered(oidc: Oidc): Promise<OpenIdClient.Configuration> {
    const { issuer, clientId, clientSecret } = this.#settings;
    const options: OpenIdClient.DiscoveryRequestOptions = {
      timeout: 5,
      ...(this.#fetch === undefined ? {} : { [oidc.customFetch]: this.#fetch as OpenIdClient.CustomFetch }),
    };
    this.#configuration ??= (
      clientSecret === undefined
        ? oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), options)
        : oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, options)
    ).catch((err: unknown) => {
      this.#configuration = undefined;
      throw err instanceof oidc.ClientError && err.code !== 'OAUTH_TIMEOUT'
        ? new SignInRefused('the provider has no usable discovery document')
        : new ProviderUnavailable('the provider cannot be reached');
    });
    return this.#configuration;
  }

  /** Where to send the browser to sign in. */
  async authorizationUrl(checks: SignInChecks): Promise<string> {
    const oidc = await loadOidc();
    const configuration = await this.#discovered(oidc);
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.#settings.redirectUrl,
      scope: this.#settings.scopes.join(' '),
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
      state: checks.state,
      nonce: checks.nonce,
    }).href;
  }

  /** The ID token of the callback's code once every check holds; throws SignInRefused or ProviderUnavailable. */
  async exchange(callbackQuery: URLSearchParams, checks: SignInChecks): Promise<string> {
    const oidc = await loadOidc();
    const configuration = await this.#discovered(oidc);
    const current = new URL(this.#settings.redirectUrl);
    current.search = callbackQuery.toString();
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: checks.verifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      if (tokens.id_token === undefined) throw new SignInRefused('the provider gave no ID token');
      return tokens.id_token;
    } catch (err) {
      if (err instanceof SignInRefused) throw err;
      throw refusalOf(oidc, err);
    }
  }
}
