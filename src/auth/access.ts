/**
 * Caller identity and access (docs/auth.md), the one owner of both: a bearer token (static, or an
 * ID token of a configured issuer) or a person's session cookie (people.ts; a state-changing call
 * needs its CSRF token) becomes an Identity; the rules decide each action; every decision worth
 * keeping (build, cancel, delete, admin; every denial) is audited: a log line and an event. With
 * `auth.mode` off every caller is ANONYMOUS and nothing is audited.
 */
import type { AuthAction, AuthRule, AuthSettings } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { RequestedBy } from '../rules/caller.js';
import { MAX_TOKEN_BYTES } from '../rules/limits.js';
import { IdTokens, IssuerUnavailable, TokenRefused } from './id-tokens.js';
import { ANONYMOUS, type Identity } from './identity.js';
import { grantingRule, type Resources } from './rules.js';
import { StaticTokens } from './static-tokens.js';
import { PeopleSignIn } from './people.js';
import { ProviderClient } from './provider-client.js';
import { CSRF_COOKIE, SESSION_COOKIE, cookieOf } from './session-cookies.js';
import { createMemorySessions, type PersonSession, type SessionStore } from './sessions.js';

/** What the audit trail keeps of a decision (docs/auth.md); never a token. */
export interface AccessDecision {
  readonly decision: 'allow' | 'deny';
  readonly action: AuthAction;
  /** The resources by name: `host/path` of a repository, `registry/name` of an image, an id. */
  readonly resource: Readonly<Record<string, string>>;
  /** Absent when the caller could not be identified. */
  readonly identity?: RequestedBy;
  readonly rule?: string;
  /** Why a caller was not identified (no token, or the refusal's words). */
  readonly reason?: string;
  readonly requestId: string;
}

export interface AccessDeps {
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'authDecisionsTotal' | 'authKeyFetchesTotal'>;
  /** Each audited decision (an event to the subscriptions asking for it); awaited. */
  readonly audited?: (decision: AccessDecision) => Promise<void>;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** People's sessions (default: this instance's memory). */
  readonly sessions?: SessionStore;
}

/** A request asking for access: its Authorization header, its id, its logger. */
export interface AccessRequest {
  readonly authorization: string | undefined;
  /** The Cookie header, the method, the X-CSRF-Token and Origin headers (a person's session). */
  readonly cookie?: string | undefined;
  readonly method?: string;
  readonly csrfToken?: string | undefined;
  readonly origin?: string | undefined;
  readonly requestId: string;
  readonly logger: Logger;
}

/** What a request is asked to do: the action, the resources it touches, and their names. */
export interface AccessAsk {
  readonly action: AuthAction;
  readonly resources: Resources;
  readonly resource: Readonly<Record<string, string>>;
  /** A denial answers 404 with this error (the resource's existence is not told) instead of 403. */
  readonly hidden?: () => Error;
}

/** The token of `Authorization: Bearer <token>`; any other scheme is not read. */
function bearerOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
  return match?.[1];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const personIdentity = (session: PersonSession): Identity => ({
  requestedBy: { kind: 'oidc', issuer: session.issuer, subject: session.subject, name: session.issuerName },
  issuerName: session.issuerName,
  claims: session.claims,
});

const describeCaller = (identity: RequestedBy): string =>
  identity.kind === 'token' ? `token ${identity.subject}` : `${identity.subject} (${identity.name ?? ''})`;

export class AccessControl {
  readonly #settings: AuthSettings;
  readonly #deps: AccessDeps;
  readonly #tokens: StaticTokens;
  readonly #idTokens: IdTokens;
  readonly #people: PeopleSignIn | undefined;
  /** The origin of the pages (the redirect URL's): a person's state-changing call comes from it. */
  readonly #origin: string | undefined;

  constructor(settings: AuthSettings, deps: AccessDeps) {
    this.#settings = settings;
    this.#deps = deps;
    this.#tokens = new StaticTokens(settings.tokens);
    this.#idTokens = new IdTokens(settings.issuers, (issuer) => ({
      fetch: deps.fetch ?? fetch,
      now: deps.now ?? Date.now,
      fetched: (ok, err) => {
        deps.metrics.authKeyFetchesTotal.inc({ issuer: issuer.name, result: ok ? 'ok' : 'error' });
        if (!ok)
          deps.logger.warn({ issuer: issuer.issuer, err }, 'the keys of an issuer could not be fetched');
      },
    }));
    this.#people = this.#peopleOf(settings, deps);
    const { redirectUrl } = settings.browser;
    this.#origin = redirectUrl === undefined ? undefined : new URL(redirectUrl).origin;
  }

  #peopleOf(settings: AuthSettings, deps: AccessDeps): PeopleSignIn | undefined {
    const { browser, browserClientSecret } = settings;
    const issuer = settings.issuers.find((entry) => entry.name === browser.issuer);
    if (!this.enforced || issuer === undefined || browser.clientId === undefined) return undefined;
    if (browser.redirectUrl === undefined) return undefined;
    const provider = new ProviderClient(
      {
        issuer: issuer.issuer,
        clientId: browser.clientId,
        redirectUrl: browser.redirectUrl,
        scopes: browser.scopes,
        ...(browserClientSecret === undefined ? {} : { clientSecret: browserClientSecret }),
      },
      deps.fetch,
    );
    return new PeopleSignIn(
      { issuer, clientId: browser.clientId, sessionHours: browser.sessionHours },
      {
        store: deps.sessions ?? createMemorySessions(deps.now),
        provider,
        verify: (token, audience) => this.#idTokens.verify(token, audience),
        ...(deps.now === undefined ? {} : { now: deps.now }),
      },
    );
  }

  /** People's sign-in from the pages, when configured (docs/auth.md). */
  get people(): PeopleSignIn | undefined {
    return this.#people;
  }

  get enforced(): boolean {
    return this.#settings.mode === 'enforce';
  }

  /** The caller of a request; throws TOKEN_REQUIRED, TOKEN_INVALID or ISSUER_UNAVAILABLE (each audited). */
  async identify(
    request: AccessRequest,
    action: AuthAction,
    resource: AccessAsk['resource'],
  ): Promise<Identity> {
    if (!this.enforced) return ANONYMOUS;
    const token = bearerOf(request.authorization);
    const refuse = async (reason: string, err: Error): Promise<never> => {
      await this.#audit(request, {
        decision: 'deny',
        action,
        resource,
        reason,
        requestId: request.requestId,
      });
      throw err;
    };
    if (token === undefined) {
      const sessionId = cookieOf(request.cookie, SESSION_COOKIE);
      if (sessionId === undefined || this.#people === undefined)
        return refuse('no token', serviceError('TOKEN_REQUIRED'));
      const session = await this.#people.session(sessionId);
      if (session === undefined) return refuse('session ended', serviceError('SESSION_ENDED'));
      if (!(await this.#csrfHolds(request, sessionId)))
        return refuse('no CSRF token', serviceError('CSRF_REFUSED'));
      return personIdentity(session);
    }
    if (Buffer.byteLength(token) > MAX_TOKEN_BYTES)
      return refuse('too large', serviceError('TOKEN_INVALID', { reason: 'too large' }));
    const name = this.#tokens.nameOf(token);
    if (name !== undefined)
      return { requestedBy: { kind: 'token', subject: name, name }, tokenName: name, claims: {} };
    try {
      const { issuer, claims } = await this.#idTokens.verify(token);
      return {
        requestedBy: { kind: 'oidc', issuer: issuer.issuer, subject: String(claims.sub), name: issuer.name },
        issuerName: issuer.name,
        claims,
      };
    } catch (err) {
      if (err instanceof TokenRefused)
        return refuse(err.reason, serviceError('TOKEN_INVALID', { reason: err.reason }));
      if (err instanceof IssuerUnavailable)
        return refuse('issuer unavailable', serviceError('ISSUER_UNAVAILABLE', { issuer: err.issuer }));
      throw err;
    }
  }

  /**
   * A call made with a session cookie that may change something: the X-CSRF-Token header equal to
   * the CSRF cookie and to the session's token (double submit), and no Origin but the pages'.
   */
  async #csrfHolds(request: AccessRequest, sessionId: string): Promise<boolean> {
    if (SAFE_METHODS.has(request.method ?? 'GET')) return true;
    if (request.origin !== undefined && request.origin !== this.#origin) return false;
    const token = request.csrfToken;
    if (token === undefined || token !== cookieOf(request.cookie, CSRF_COOKIE)) return false;
    return (await this.#people?.csrfHolds(sessionId, token)) === true;
  }

  /** The session a request's cookie names, unless unknown or ended (GET /auth/session). */
  async sessionOf(request: AccessRequest): Promise<PersonSession | undefined> {
    const sessionId = cookieOf(request.cookie, SESSION_COOKIE);
    return sessionId === undefined ? undefined : this.#people?.session(sessionId);
  }

  /** Ends the session a request's cookie names (POST /auth/logout): its CSRF token is needed while it lives. */
  async endSession(request: AccessRequest): Promise<void> {
    const sessionId = cookieOf(request.cookie, SESSION_COOKIE);
    if (sessionId === undefined || this.#people === undefined) return;
    if ((await this.#people.session(sessionId)) === undefined) return;
    if (!(await this.#csrfHolds(request, sessionId))) throw serviceError('CSRF_REFUSED');
    await this.#people.end(sessionId);
  }

  /** Whether `identity` may do `action` on `resources` (no audit: a filter of what is shown). */
  allows(identity: Identity, action: AuthAction, resources: Resources): boolean {
    return !this.enforced || grantingRule(this.#settings.rules, identity, action, resources) !== undefined;
  }

  /**
   * Decides `ask` for `identity`: audited as docs/auth.md says; throws ACCESS_DENIED (or `hidden`).
   * The granting rule (none while identities are off).
   */
  async authorize(request: AccessRequest, identity: Identity, ask: AccessAsk): Promise<AuthRule | undefined> {
    if (!this.enforced) return undefined;
    const rule = grantingRule(this.#settings.rules, identity, ask.action, ask.resources);
    const decision: AccessDecision = {
      decision: rule === undefined ? 'deny' : 'allow',
      action: ask.action,
      resource: ask.resource,
      identity: identity.requestedBy,
      ...(rule === undefined ? {} : { rule: rule.name }),
      requestId: request.requestId,
    };
    this.#deps.metrics.authDecisionsTotal.inc({ decision: decision.decision, action: ask.action });
    // Allowed reads are not audited: they would drown the trail.
    if (rule === undefined || ask.action !== 'read') await this.#audit(request, decision);
    if (rule !== undefined) return rule;
    if (ask.hidden !== undefined) throw ask.hidden();
    throw serviceError('ACCESS_DENIED', {
      action: ask.action,
      resource: Object.values(ask.resource).join(' '),
      caller: describeCaller(identity.requestedBy),
    });
  }

  async #audit(request: AccessRequest, decision: AccessDecision): Promise<void> {
    if (decision.identity === undefined)
      this.#deps.metrics.authDecisionsTotal.inc({ decision: 'deny', action: decision.action });
    request.logger.info({ audit: decision }, 'access decided');
    await this.#deps
      .audited?.(decision)
      .catch((err: unknown) =>
        request.logger.warn({ err }, 'the access decision event could not be recorded'),
      );
  }
}
