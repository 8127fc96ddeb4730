// A minimal registry v2 client for the stack and its tests: one request with the registry's own
// auth dance (no auth, Basic, or Bearer through the realm with Basic credentials).
import { basicAuthHeader } from '../../src/secrets/basic-auth.js';

export interface RegistryCreds {
  user: string;
  password: string;
}

const basicHeader = (c: RegistryCreds): string => basicAuthHeader(c.user, c.password);

/** Parses `Bearer realm="..",service="..",scope=".."` into its parameters. */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const m = /^(\w+)\s*(.*)$/s.exec(header.trim());
  const params: Record<string, string> = {};
  if (!m) return { scheme: '', params };
  for (const p of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) params[p[1]!.toLowerCase()] = p[2]!;
  return { scheme: (m[1] ?? '').toLowerCase(), params };
}

/** Fetches a bearer token from the realm of a challenge. */
export async function fetchToken(params: Record<string, string>, creds?: RegistryCreds): Promise<string> {
  if (!params.realm) throw new Error('bearer challenge without realm');
  const url = new URL(params.realm);
  if (params.service) url.searchParams.set('service', params.service);
  if (params.scope) for (const s of params.scope.split(' ')) url.searchParams.append('scope', s);
  const res = await fetch(url, { headers: creds ? { authorization: basicHeader(creds) } : {} });
  if (!res.ok) throw new Error(`token request to ${url.origin}${url.pathname} answered ${res.status}`);
  const body = (await res.json()) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw new Error('token response without token');
  return token;
}

/** `METHOD http://<host><path>` against a registry, authenticating when challenged. */
export async function registryFetch(
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; creds?: RegistryCreds } = {},
): Promise<Response> {
  const url = `http://${host}${path}`;
  const headers = { ...(init.headers ?? {}) };
  const method = init.method ?? 'GET';
  const first = await fetch(url, { method, headers, signal: AbortSignal.timeout(30_000) });
  if (first.status !== 401) return first;
  await first.arrayBuffer();
  const { scheme, params } = parseChallenge(first.headers.get('www-authenticate') ?? '');
  if (scheme === 'basic') {
    if (!init.creds) return fetch(url, { method, headers });
    return fetch(url, { method, headers: { ...headers, authorization: basicHeader(init.creds) } });
  }
  if (scheme === 'bearer') {
    const token = await fetchToken(params, init.creds);
    return fetch(url, { method, headers: { ...headers, authorization: `Bearer ${token}` } });
  }
  throw new Error(`unknown auth scheme in challenge from ${host}: ${scheme}`);
}

export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');
