/**
 * Registry HTTP API v2 client: requests with the right auth (Basic, or a Bearer token from the
 * challenge's realm, cached), manifests and blobs, immutable content cached by digest.
 * Every failure it throws is a 502 ServiceError without any credential in it.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RegistryCredentials } from './docker-auth.js';
import { serviceError } from '../errors/errors.js';
import { withSpan } from '../observability/tracing.js';
import {
  TokenCache,
  type TokenCacheKey,
  basicAuthorization,
  credentialIdentity,
  mergeScopes,
  parseWwwAuthenticate,
  repositoryScope,
  tokenLifetimeMs,
} from './auth.js';
import { ContentCache } from './content-cache.js';
import { MANIFEST_ACCEPT } from './manifest.js';
import { type ImageReference, isInsecureRegistry, unexpectedAnswer } from './reference.js';
import { Transport, TransportError, type TransportResponse } from './transport.js';

/** Limits of what the service reads from a registry. */
export const LIMITS = {
  timeoutMs: 30_000,
  manifestBytes: 4 * 1024 * 1024,
  configBytes: 8 * 1024 * 1024,
  tokenBytes: 1024 * 1024,
  tagsBytes: 1024 * 1024,
  errorBytes: 64 * 1024,
} as const;

const MAX_AUTH_MODES = 1000;

export const PULL: readonly string[] = ['pull'];
export const PUSH_ACTIONS: readonly string[] = ['pull', 'push'];

export type RegistryMethod = 'GET' | 'HEAD' | 'DELETE' | 'PUT' | 'POST';

/** Options of one v2 request: what is accepted back, and the body sent (PUT/POST). */
export interface RequestOptions {
  accept?: string;
  maxBytes: number;
  body?: Buffer;
  contentType?: string;
}
export const DELETE_ACTIONS: readonly string[] = ['pull', 'push', 'delete'];

/** One operation on one repository with one credential (or none). */
export interface RegistryCall {
  readonly ref: ImageReference;
  readonly credentials: RegistryCredentials | undefined;
  /** Repository actions the operation needs (`pull`, or `pull,push,delete`). */
  readonly actions: readonly string[];
}

export interface RegistryResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface FetchedManifest {
  /** Digest of the exact bytes read (`sha256:...`). */
  digest: string;
  body: Buffer;
  contentType: string | undefined;
}

type AuthMode = { kind: 'bearer'; realm: string; service: string } | { kind: 'basic' };

export interface RegistryClientOptions {
  insecureRegistries: readonly string[];
  timeoutMs?: number;
  transport?: Transport;
  tokens?: TokenCache;
  content?: ContentCache;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

export class RegistryClient {
  readonly transport: Transport;
  readonly tokens: TokenCache;
  readonly content: ContentCache;
  private readonly insecureRegistries: readonly string[];
  private readonly timeoutMs: number;
  /** What each registry origin asked for last time, so a warm call authenticates up front. */
  private readonly authModes = new Map<string, AuthMode>();
  private readonly pendingTokens = new Map<string, Promise<string>>();

  constructor(options: RegistryClientOptions) {
    this.insecureRegistries = options.insecureRegistries;
    this.timeoutMs = options.timeoutMs ?? LIMITS.timeoutMs;
    this.transport = options.transport ?? new Transport();
    this.tokens = options.tokens ?? new TokenCache();
    this.content = options.content ?? new ContentCache();
  }

  /** Closes pooled connections. */
  close(): void {
    this.transport.destroy();
  }

  /**
   * One v2 request with auth: a cached token or Basic credentials go up front; on a 401 the
   * challenge is answered once (token exchange or Basic) and the request retried once.
   */
  async request(
    call: RegistryCall,
    method: RegistryMethod,
    path: string | URL,
    options: RequestOptions,
  ): Promise<RegistryResponse> {
    const { ref } = call;
    const url = typeof path === 'string' ? new URL(`${ref.origin}/v2/${path}`) : path;
    if (url.origin !== ref.origin) {
      // An upload location on another origin would receive this registry's credentials.
      throw serviceError('REGISTRY_UNREACHABLE', {
        registry: ref.registry,
        reason: `upload location on another origin refused`,
        image: ref.image,
      });
    }
    const scope = repositoryScope(ref.name, call.actions);
    const mode = this.authModes.get(ref.origin);
    const upfront = await this.upfront(call, mode, scope);
    const first = await this.send(call, method, url, upfront.authorization, options);
    if (first.status !== 401) return first;
    const retry = await this.answerChallenge(call, first, { mode, scope, ...upfront });
    return retry === undefined ? first : this.send(call, method, url, retry, options);
  }

  /** What goes up front: a cached token (or one fetched, the realm being known), or Basic credentials. */
  private async upfront(
    call: RegistryCall,
    mode: AuthMode | undefined,
    scope: string,
  ): Promise<{ authorization?: string; freshToken: boolean }> {
    if (mode?.kind === 'bearer') {
      // The realm is known from an earlier challenge: a missing or expired token is fetched
      // up front instead of learning the challenge again.
      const key = this.tokenKey(call.ref, mode, scope, credentialIdentity(call.credentials));
      const cached = this.tokens.get(key);
      const token = cached ?? (await this.token(call, key, [scope]));
      return { authorization: `Bearer ${token}`, freshToken: cached === undefined };
    }
    if (mode?.kind === 'basic' && call.credentials)
      return { authorization: basicAuthorization(call.credentials), freshToken: false };
    return { freshToken: false };
  }

  /** The authorization answering a 401's challenge, or undefined when a retry would be refused again. */
  private async answerChallenge(
    call: RegistryCall,
    first: RegistryResponse,
    sent: { mode: AuthMode | undefined; scope: string; authorization?: string; freshToken: boolean },
  ): Promise<string | undefined> {
    const { ref } = call;
    const { mode, scope } = sent;
    const challenges = parseWwwAuthenticate(header(first.headers, 'www-authenticate') ?? '');
    const bearer = challenges.find((c) => c.scheme === 'bearer' && c.params.realm);
    const basic = challenges.find((c) => c.scheme === 'basic');
    if (bearer) {
      const next: AuthMode = {
        kind: 'bearer',
        realm: bearer.params.realm ?? '',
        service: bearer.params.service ?? '',
      };
      const scopes = mergeScopes(scope, bearer.params.scope);
      const sameAsk =
        mode?.kind === 'bearer' &&
        mode.realm === next.realm &&
        mode.service === next.service &&
        scopes.length === 1 &&
        scopes[0] === scope;
      // A token fetched just now for exactly what the challenge asks would be refused again.
      if (sent.freshToken && sameAsk) return undefined;
      this.rememberMode(ref.origin, next);
      const key = this.tokenKey(ref, next, scope, credentialIdentity(call.credentials));
      this.tokens.delete(key);
      return `Bearer ${await this.token(call, key, scopes)}`;
    }
    if (basic && call.credentials && !sent.authorization?.startsWith('Basic ')) {
      this.rememberMode(ref.origin, { kind: 'basic' });
      return basicAuthorization(call.credentials);
    }
    return undefined;
  }

  /** Bounded: origins come from requests. */
  private rememberMode(origin: string, mode: AuthMode): void {
    this.authModes.delete(origin);
    this.authModes.set(origin, mode);
    if (this.authModes.size > MAX_AUTH_MODES) {
      const oldest = this.authModes.keys().next().value;
      if (oldest !== undefined) this.authModes.delete(oldest);
    }
  }

  private tokenKey(
    ref: ImageReference,
    mode: { realm: string; service: string },
    scope: string,
    identity: string,
  ): TokenCacheKey {
    return { registry: ref.host, realm: mode.realm, service: mode.service, scope, identity };
  }

  /** A bearer token for `key` (one exchange at a time per key). */
  private token(call: RegistryCall, key: TokenCacheKey, scopes: string[]): Promise<string> {
    const id = TokenCache.keyOf(key);
    let pending = this.pendingTokens.get(id);
    if (!pending) {
      pending = this.exchange(call, key, scopes).finally(() => this.pendingTokens.delete(id));
      this.pendingTokens.set(id, pending);
    }
    return pending;
  }

  private async exchange(call: RegistryCall, key: TokenCacheKey, scopes: string[]): Promise<string> {
    const { ref } = call;
    let realm: URL;
    try {
      realm = new URL(key.realm);
    } catch {
      throw serviceError('TOKEN_REALM_INVALID', { registry: ref.registry, image: ref.image });
    }
    if (realm.protocol !== 'https:' && realm.protocol !== 'http:') {
      throw serviceError('TOKEN_REALM_SCHEME_REFUSED', {
        registry: ref.registry,
        scheme: realm.protocol,
        image: ref.image,
      });
    }
    if (key.service) realm.searchParams.set('service', key.service);
    for (const scope of scopes) realm.searchParams.append('scope', scope);
    // Credentials go to a realm only over https, or plain http for a registry listed as insecure.
    const mayCarryCredentials =
      realm.protocol === 'https:' || isInsecureRegistry(ref.host, this.insecureRegistries);
    const authorization =
      call.credentials && mayCarryCredentials ? basicAuthorization(call.credentials) : undefined;
    const res = await this.sendRaw(call, 'GET', realm, authorization, {
      accept: 'application/json',
      maxBytes: LIMITS.tokenBytes,
      span: 'registry.token',
    });
    if (res.status !== 200) throw unexpectedAnswer(ref, res.status);
    let json: unknown;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw serviceError('TOKEN_NOT_JSON', { registry: ref.registry, image: ref.image });
    }
    const doc = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    const token =
      typeof doc.token === 'string' && doc.token
        ? doc.token
        : typeof doc.access_token === 'string' && doc.access_token
          ? doc.access_token
          : undefined;
    if (!token) throw serviceError('TOKEN_MISSING', { registry: ref.registry, image: ref.image });
    this.tokens.set(key, token, tokenLifetimeMs(doc.expires_in));
    return token;
  }

  private send(
    call: RegistryCall,
    method: RegistryMethod,
    url: URL,
    authorization: string | undefined,
    options: RequestOptions,
  ): Promise<TransportResponse> {
    return this.sendRaw(call, method, url, authorization, { ...options, span: 'registry.request' });
  }

  private async sendRaw(
    call: RegistryCall,
    method: RegistryMethod,
    url: URL,
    authorization: string | undefined,
    options: RequestOptions & { span: string },
  ): Promise<TransportResponse> {
    const headers: Record<string, string> = { 'user-agent': 'image-build-service' };
    if (options.accept) headers.accept = options.accept;
    if (options.contentType) headers['content-type'] = options.contentType;
    if (authorization) headers.authorization = authorization;
    const attributes = {
      'registry.host': call.ref.host,
      'http.request.method': method,
      'url.path': url.pathname,
    };
    try {
      return await withSpan(options.span, attributes, () =>
        this.transport.send({
          method,
          url,
          headers,
          maxBytes: options.maxBytes,
          timeoutMs: this.timeoutMs,
          ...(options.body === undefined ? {} : { body: options.body }),
        }),
      );
    } catch (err) {
      if (err instanceof TransportError) {
        if (options.span === 'registry.token')
          throw serviceError(
            'TOKEN_REALM_UNREACHABLE',
            { registry: call.ref.registry, realm: url.host, reason: err.reason, image: call.ref.image },
            { cause: err },
          );
        throw serviceError(
          'REGISTRY_UNREACHABLE',
          { registry: call.ref.registry, reason: err.reason, image: call.ref.image },
          { cause: err },
        );
      }
      throw err;
    }
  }

  // --- v2 resources ---------------------------------------------------------------------

  /** HEAD of a manifest (GET when the registry refuses HEAD): status and digest, no body kept. */
  async headManifest(call: RegistryCall, reference: string): Promise<{ status: number; digest?: string }> {
    const path = `${call.ref.name}/manifests/${reference}`;
    let res = await this.request(call, 'HEAD', path, { accept: MANIFEST_ACCEPT, maxBytes: 0 });
    if (res.status === 405 || res.status === 501) {
      res = await this.request(call, 'GET', path, {
        accept: MANIFEST_ACCEPT,
        maxBytes: LIMITS.manifestBytes,
      });
      if (res.status === 200) return { status: 200, digest: sha256(res.body) };
    }
    const digest = header(res.headers, 'docker-content-digest');
    return digest ? { status: res.status, digest } : { status: res.status };
  }

  /** A manifest by tag or digest; undefined on 404; other statuses throw. */
  async getManifest(call: RegistryCall, reference: string): Promise<FetchedManifest | undefined> {
    const byDigest = reference.includes(':');
    const cacheKey = `${call.ref.host}/${call.ref.name}@${reference}`;
    if (byDigest) {
      const cached = this.content.get(cacheKey);
      if (cached) return { digest: reference, body: cached, contentType: undefined };
    }
    const res = await this.request(call, 'GET', `${call.ref.name}/manifests/${reference}`, {
      accept: MANIFEST_ACCEPT,
      maxBytes: LIMITS.manifestBytes,
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw unexpectedAnswer(call.ref, res.status);
    const contentType = header(res.headers, 'content-type');
    if (byDigest) {
      this.verify(call, reference, res.body);
      this.content.set(cacheKey, res.body);
      return { digest: reference, body: res.body, contentType };
    }
    return { digest: sha256(res.body), body: res.body, contentType };
  }

  /** A blob by digest (verified, cached); 404 and other failures throw. */
  async getBlob(call: RegistryCall, digest: string, maxBytes: number): Promise<Buffer> {
    const cacheKey = `${call.ref.host}/${call.ref.name}@${digest}`;
    const cached = this.content.get(cacheKey);
    if (cached) return cached;
    const res = await this.request(call, 'GET', `${call.ref.name}/blobs/${digest}`, { maxBytes });
    if (res.status !== 200) throw unexpectedAnswer(call.ref, res.status);
    this.verify(call, digest, res.body);
    this.content.set(cacheKey, res.body);
    return res.body;
  }

  /** Content read by digest must hash to that digest (the cache relies on it). */
  private verify(call: RegistryCall, digest: string, body: Buffer): void {
    const [algorithm, hex] = digest.split(':');
    if ((algorithm !== 'sha256' && algorithm !== 'sha512') || !hex) {
      throw serviceError('DIGEST_ALGORITHM_UNSUPPORTED', {
        registry: call.ref.registry,
        digest,
        image: call.ref.image,
      });
    }
    const actual = createHash(algorithm).update(body).digest('hex');
    if (actual !== hex) {
      throw serviceError('DIGEST_MISMATCH', { registry: call.ref.registry, digest, image: call.ref.image });
    }
  }
}

export const sha256 = (body: Buffer): string => `sha256:${createHash('sha256').update(body).digest('hex')}`;

/** The `errors[].code` values of a registry error body. */
export function errorCodes(body: Buffer): string[] {
  try {
    const json = JSON.parse(body.toString('utf8')) as { errors?: unknown };
    if (!Array.isArray(json.errors)) return [];
    return json.errors
      .map((e: unknown) => (typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined))
      .filter((c): c is string => typeof c === 'string');
  } catch {
    return [];
  }
}
