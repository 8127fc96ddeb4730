/**
 * Repository URL parsing and scheme policy (pure; refusals: docs/errors.md). Accepted: `https://`,
 * `ssh://`, SCP-style `[user@]host:path`; `git://` and `http://` only when insecure git protocols are
 * allowed. Refused before anything runs: `file://` and other schemes, local paths, `<transport>::`
 * forms, whitespace or control characters, a host or user starting with `-`, an empty host,
 * credentials (a password, or any user on https/http/git). `cloneUrl` is rebuilt from the parts.
 */
import { serviceError } from '../../src/errors/errors.js';
import type { RepoScheme, RepoUrl } from './plan-types.js';

const MAX_REPOSITORY_LENGTH = 2048;

export interface RepoUrlPolicy {
  allowInsecureGitProtocols: boolean;
}

/** Whitespace, C0 controls, DEL and the C1 range: never part of a URL we accept. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE_CHARS = /[\s\x00-\x1f\x7f-\x9f]/;
/** `ext::sh -c ...`, `fd::3`, `foo::bar`: git's remote-helper transport syntax. */
const TRANSPORT_FORM = /^[A-Za-z][A-Za-z0-9+.-]*::/;
const SCHEME_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s;
/** DNS-like names and IPv4 (letters, digits, `.`, `_`, `-`), never starting with `-` or `.`. */
const HOST_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const IPV6 = /^\[([0-9A-Fa-f:.]+)\]$/;
const SSH_USER = /^[A-Za-z0-9_][A-Za-z0-9_.+~-]*$/;
const PORT = /^[0-9]{1,5}$/;
/** Path characters: RFC 3986 pchar plus `/` (percent escapes allowed), no `?` or `#`. */
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]+$/;

/** Parses `repository` under `policy`; throws the 400s of docs/errors.md. */
export function parseRepoUrl(repository: string, policy: RepoUrlPolicy): RepoUrl {
  const unparseable = () => serviceError('INVALID_REPOSITORY_URL', { repository });
  if (repository.length === 0 || repository.length > MAX_REPOSITORY_LENGTH) throw unparseable();
  if (UNSAFE_CHARS.test(repository)) throw unparseable();
  if (repository.startsWith('-')) throw unparseable();
  if (TRANSPORT_FORM.test(repository)) throw unparseable();

  const schemeMatch = SCHEME_FORM.exec(repository);
  if (schemeMatch) return parseSchemeUrl(repository, schemeMatch[1] ?? '', schemeMatch[2] ?? '', policy);
  return parseScpStyle(repository);
}

function parseSchemeUrl(repository: string, rawScheme: string, rest: string, policy: RepoUrlPolicy): RepoUrl {
  const unparseable = () => serviceError('INVALID_REPOSITORY_URL', { repository });
  const scheme = rawScheme.toLowerCase();
  if (!isAllowedScheme(scheme, policy)) throw serviceError('SCHEME_NOT_ALLOWED', { scheme });

  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const rawPath = slash < 0 ? '' : rest.slice(slash + 1);

  let user: string | undefined;
  let hostPort = authority;
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    hostPort = authority.slice(at + 1);
    // A password, or any user on https/http/git (a token is often passed as the user name).
    if (userinfo.includes(':') || scheme !== 'ssh') throw serviceError('CREDENTIALS_IN_URL');
    if (!SSH_USER.test(userinfo)) throw unparseable();
    user = userinfo;
  }

  const { host, port } = parseHostPort(hostPort, unparseable);
  const path = checkPath(rawPath.replace(/^\/+/, ''), unparseable);
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const cloneUrl =
    `${scheme}://${user === undefined ? '' : `${user}@`}${hostForUrl}` +
    `${port === undefined ? '' : `:${port}`}/${path}`;
  return {
    scheme: scheme as RepoScheme,
    scpStyle: false,
    ...(user === undefined ? {} : { user }),
    host,
    ...(port === undefined ? {} : { port }),
    path,
    cloneUrl,
  };
}

/** `[user@]host:path` where the first `:` comes before any `/` (git's own rule); anything else is a local path. */
function parseScpStyle(repository: string): RepoUrl {
  const unparseable = () => serviceError('INVALID_REPOSITORY_URL', { repository });
  // `user:token@host:path`: a password before the host (git would read `user` as the host).
  if (/^[^/@:[\]]*:[^/]*@/.test(repository)) throw serviceError('CREDENTIALS_IN_URL');
  // IPv6 host: `[::1]:path` or `user@[::1]:path`.
  const match = /^(?:([^@/:[\]]*)@)?(\[[^\]/]*\]|[^@/:[\]]*):(.*)$/s.exec(repository);
  if (!match) throw unparseable();
  const [, rawUser, rawHost = '', rawPath = ''] = match;
  let user: string | undefined;
  if (rawUser !== undefined) {
    if (!SSH_USER.test(rawUser)) throw unparseable();
    user = rawUser;
  }
  const ipv6 = IPV6.exec(rawHost);
  let host: string;
  if (ipv6) host = (ipv6[1] ?? '').toLowerCase();
  else if (HOST_NAME.test(rawHost)) host = rawHost.toLowerCase();
  else throw unparseable();
  if (rawPath.startsWith('-')) throw unparseable();
  // Keep an absolute SCP path absolute in the clone URL (`host:/srv/x` differs from `host:srv/x`).
  const absolute = rawPath.startsWith('/');
  const path = checkPath(rawPath.replace(/^\/+/, ''), unparseable);
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return {
    scheme: 'ssh',
    scpStyle: true,
    ...(user === undefined ? {} : { user }),
    host,
    path,
    cloneUrl: `${user === undefined ? '' : `${user}@`}${hostForUrl}:${absolute ? '/' : ''}${path}`,
  };
}

function isAllowedScheme(scheme: string, policy: RepoUrlPolicy): boolean {
  if (scheme === 'https' || scheme === 'ssh') return true;
  if (scheme === 'git' || scheme === 'http') return policy.allowInsecureGitProtocols;
  return false;
}

function parseHostPort(
  hostPort: string,
  unparseable: () => Error,
): { host: string; port: number | undefined } {
  let hostPart = hostPort;
  let portPart: string | undefined;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) throw unparseable();
    hostPart = hostPort.slice(0, close + 1);
    const after = hostPort.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) throw unparseable();
      portPart = after.slice(1);
    }
  } else {
    const colon = hostPort.indexOf(':');
    if (colon >= 0) {
      hostPart = hostPort.slice(0, colon);
      portPart = hostPort.slice(colon + 1);
    }
  }
  let host: string;
  const ipv6 = IPV6.exec(hostPart);
  if (ipv6) host = (ipv6[1] ?? '').toLowerCase();
  else if (HOST_NAME.test(hostPart)) host = hostPart.toLowerCase();
  else throw unparseable(); // empty, `-oProxyCommand=...`, `.x`, `%2d...`, unicode...
  let port: number | undefined;
  if (portPart !== undefined) {
    if (!PORT.test(portPart)) throw unparseable();
    port = Number(portPart);
    if (port < 1 || port > 65535) throw unparseable();
  }
  return { host, port };
}

/** A non-empty repository path without `.`/`..` segments or characters a URL path cannot carry. */
function checkPath(path: string, unparseable: () => Error): string {
  if (path === '' || !PATH_CHARS.test(path)) throw unparseable();
  const segments = path.split('/');
  if (segments.some((s) => s === '.' || s === '..')) throw unparseable();
  if (path.replace(/\/+$/, '') === '') throw unparseable();
  return path;
}

/** The host as ssh and known_hosts name it: `host`, or `[host]:port` for a non-default port. */
export function knownHostsName(url: Pick<RepoUrl, 'host' | 'port'>): string {
  if (url.port === undefined || url.port === 22) return url.host;
  return `[${url.host}]:${url.port}`;
}
