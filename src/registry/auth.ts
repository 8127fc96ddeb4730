/**
 * Registry auth, the pure parts: WWW-Authenticate parsing (several challenges, quoted values,
 * commas inside quotes), token scopes, the credential identity and the bearer token cache.
 */
import { createHash } from 'node:crypto';
import { basicAuthHeader } from '../secrets/basic-auth.js';
import type { RegistryCredentials } from './docker-auth.js';

export interface Challenge {
  /** Lower-cased auth scheme (`bearer`, `basic`, ...). */
  scheme: string;
  /** Parameters with lower-cased names. */
  params: Record<string, string>;
  /** A token68 value, when the challenge carries one instead of parameters. */
  token68?: string;
}

const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;
const TOKEN68_RE = /^[A-Za-z0-9\-._~+/]+=*(?=[ \t]*(?:,|$))/;

/** Parses a WWW-Authenticate value (or several joined with commas) into its challenges (RFC 9110 11.6.1). */
export function parseWwwAuthenticate(header: string): Challenge[] {
  const out: Challenge[] = [];
  const n = header.length;
  let i = 0;
  let current: Challenge | undefined;
  const skip = (chars: RegExp): void => {
    while (i < n && chars.test(header[i] ?? '')) i++;
  };
  while (i < n) {
    skip(/[ \t,]/);
    if (i >= n) break;
    const token = TOKEN_RE.exec(header.slice(i))?.[0];
    if (!token) {
      i++; // stray character: skip it
      continue;
    }
    i += token.length;
    skip(/[ \t]/);
    if (current && header[i] === '=') {
      i++;
      skip(/[ \t]/);
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++; // closing quote
      } else {
        const bare = /^[^,\s]*/.exec(header.slice(i))?.[0] ?? '';
        value = bare;
        i += bare.length;
      }
      current.params[token.toLowerCase()] = value;
      continue;
    }
    current = { scheme: token.toLowerCase(), params: {} };
    out.push(current);
    const t68 = TOKEN68_RE.exec(header.slice(i))?.[0];
    if (t68) {
      current.token68 = t68;
      i += t68.length;
    }
  }
  return out;
}

/** Resource scope of a repository: `repository:<name>:<actions>`. */
export const repositoryScope = (name: string, actions: readonly string[]): string =>
  `repository:${name}:${actions.join(',')}`;

/**
 * Our scope plus the ones a challenge asks for (space-separated), actions of the same
 * resource merged in first-seen order.
 */
export function mergeScopes(ours: string, challenge: string | undefined): string[] {
  const order: string[] = [];
  const actions = new Map<string, string[]>();
  for (const scope of [ours, ...(challenge ?? '').split(' ')]) {
    if (!scope) continue;
    const last = scope.lastIndexOf(':');
    const first = scope.indexOf(':');
    if (first < 0 || last === first) {
      if (!actions.has(scope)) {
        actions.set(scope, []);
        order.push(scope);
      }
      continue;
    }
    const resource = scope.slice(0, last);
    const list = actions.get(resource) ?? [];
    if (!actions.has(resource)) {
      actions.set(resource, list);
      order.push(resource);
    }
    for (const action of scope.slice(last + 1).split(','))
      if (action && !list.includes(action)) list.push(action);
  }
  return order.map((resource) => {
    const list = actions.get(resource) ?? [];
    return list.length > 0 ? `${resource}:${list.join(',')}` : resource;
  });
}

/** A stable identity for a credential (a hash: the cache never holds the password as a key). */
export function credentialIdentity(credentials: RegistryCredentials | undefined): string {
  if (!credentials) return 'anonymous';
  return createHash('sha256')
    .update(credentials.username)
    .update('\0')
    .update(credentials.password)
    .digest('hex')
    .slice(0, 32);
}

export const basicAuthorization = (credentials: RegistryCredentials): string =>
  basicAuthHeader(credentials.username, credentials.password);

/** The token's lifetime in the cache: `expires_in` (default 60 s) minus a margin. */
export function tokenLifetimeMs(expiresIn: unknown): number {
  const seconds =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 60;
  const margin = Math.min(30, seconds / 4);
  return Math.max(0, (seconds - margin) * 1000);
}

export interface TokenCacheKey {
  registry: string;
  realm: string;
  service: string;
  scope: string;
  identity: string;
}

/** Bearer tokens per registry, realm, service, scope and credential identity (bounded). */
export class TokenCache {
  private readonly entries = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  static keyOf(key: TokenCacheKey): string {
    return JSON.stringify([key.registry, key.realm, key.service, key.scope, key.identity]);
  }

  get(key: TokenCacheKey): string | undefined {
    const k = TokenCache.keyOf(key);
    const entry = this.entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(k);
      return undefined;
    }
    return entry.token;
  }

  set(key: TokenCacheKey, token: string, lifetimeMs: number): void {
    const k = TokenCache.keyOf(key);
    this.entries.delete(k);
    if (lifetimeMs <= 0) return;
    this.entries.set(k, { token, expiresAt: this.now() + lifetimeMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  delete(key: TokenCacheKey): void {
    this.entries.delete(TokenCache.keyOf(key));
  }

  get size(): number {
    return this.entries.size;
  }
}
