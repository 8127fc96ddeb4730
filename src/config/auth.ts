/**
 * The caller identity settings (docs/auth.md): the shapes of an issuer, a static token and an
 * access rule for ajv, names unique within each list, and the checks across the lists that only
 * the whole `auth` section can tell (a rule naming an unknown issuer or token, `enforce` with
 * nobody to accept). A problem never shows a token's digest. Pure.
 */
import { AUTH_ACTIONS, type AuthSettings } from './types.js';

const NAME = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$',
  description: 'letters, digits, ".", "_" and "-", at most 63',
} as const;
/** A glob of the settings (`*`, `**`, `?`) with `{claim}` placeholders, no control characters. */
const PATTERN = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  pattern: '^[^\\s\\x00-\\x1f\\x7f]+$',
  description: 'a glob (`*`, `**`) with {claim} placeholders, no spaces',
} as const;

export const AUTH_ISSUER_SCHEMA = {
  type: 'object',
  required: ['name', 'issuer', 'audience'],
  properties: {
    name: NAME,
    issuer: {
      type: 'string',
      pattern: '^https://[^\\s]+$',
      description: 'an https:// URL (discovery and keys are fetched from it)',
    },
    audience: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
} as const;

export const AUTH_TOKEN_SCHEMA = {
  type: 'object',
  required: ['name', 'sha256'],
  properties: {
    name: NAME,
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: '64 hex digits' },
  },
  additionalProperties: false,
} as const;

export const AUTH_RULE_SCHEMA = {
  type: 'object',
  required: ['name', 'actions'],
  properties: {
    name: NAME,
    issuer: NAME,
    token: NAME,
    tenant: PATTERN,
    claims: {
      type: 'object',
      propertyNames: { pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
      additionalProperties: { type: 'string' },
    },
    actions: { type: 'array', minItems: 1, items: { type: 'string', enum: [...AUTH_ACTIONS] } },
    repositories: {
      type: 'array',
      items: {
        type: 'object',
        required: ['host', 'path'],
        properties: { host: PATTERN, path: PATTERN },
        additionalProperties: false,
      },
    },
    images: {
      type: 'array',
      items: {
        type: 'object',
        required: ['registry', 'name'],
        properties: { registry: PATTERN, name: PATTERN },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
  oneOf: [{ required: ['issuer'] }, { required: ['token'] }],
} as const;

/** Each later entry whose name an earlier one has: a problem (named by `item`). */
export function duplicateNameProblems(
  entries: readonly { readonly name: string }[],
  item: (index: number) => string,
): string[] {
  const seen = new Map<string, number>();
  return entries.flatMap((entry, index) => {
    const first = seen.get(entry.name);
    if (first === undefined) {
      seen.set(entry.name, index);
      return [];
    }
    return [`${item(index)}: name "${entry.name}" is already the name of entry [${first}]`];
  });
}

/** The checks across the lists of `auth`. */
export function authProblems(
  auth: Pick<AuthSettings, 'issuers' | 'tokens' | 'rules'> & { readonly mode?: string },
): string[] {
  const problems: string[] = [];
  const issuers = new Set(auth.issuers.map((i) => i.name));
  const tokens = new Set(auth.tokens.map((t) => t.name));
  for (const rule of auth.rules) {
    if (rule.issuer !== undefined && !issuers.has(rule.issuer))
      problems.push(`auth rule "${rule.name}": unknown issuer "${rule.issuer}"`);
    if (rule.token !== undefined && !tokens.has(rule.token))
      problems.push(`auth rule "${rule.name}": unknown token "${rule.token}"`);
  }
  if (auth.mode === 'enforce' && issuers.size === 0 && tokens.size === 0)
    problems.push('auth.mode is enforce but no issuer and no token is configured: nobody could call');
  return problems;
}

/** People's sign-in settings as given (`auth.browser.*`, the secret only as whether it is set). */
export interface BrowserSignInInput {
  readonly issuer?: string | undefined;
  readonly clientId?: string | undefined;
  readonly redirectUrl?: string | undefined;
  readonly scopes: readonly string[];
  readonly secretGiven: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Whether `url` is plain http on a loopback address (the one place http is accepted, cookies not Secure). */
export const isLoopbackHttp = (url: string): boolean => {
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
};

/** The checks of `auth.browser` against the rest of `auth`. */
export function browserSignInProblems(
  browser: BrowserSignInInput,
  issuers: readonly { readonly name: string }[],
  mode: string | undefined,
): string[] {
  const { issuer, clientId, redirectUrl } = browser;
  if (issuer === undefined) {
    const given = clientId !== undefined || redirectUrl !== undefined || browser.secretGiven;
    return given ? ['auth.browser is set without auth.browser.issuer: name an entry of auth.issuers'] : [];
  }
  const problems: string[] = [];
  if (!issuers.some((entry) => entry.name === issuer))
    problems.push(`auth.browser.issuer: unknown issuer "${issuer}" (name an entry of auth.issuers)`);
  if (clientId === undefined) problems.push('auth.browser.clientId is required with auth.browser.issuer');
  if (redirectUrl === undefined)
    problems.push('auth.browser.redirectUrl is required with auth.browser.issuer');
  else if (!redirectUrl.startsWith('https://') && !isLoopbackHttp(redirectUrl))
    problems.push('auth.browser.redirectUrl must be https (plain http only on a loopback address)');
  if (!browser.scopes.includes('openid')) problems.push('auth.browser.scopes must include openid');
  if (mode !== 'enforce') problems.push('auth.browser needs auth.mode enforce');
  return problems;
}
