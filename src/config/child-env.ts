/**
 * The part of the service's own environment that child processes inherit: an allowlist
 * (search path, locale, time zone, CA bundles, proxies, runtime dir). Nothing else, so no
 * secret of the service's environment reaches git, buildx or the Dev Containers CLI. Pure.
 */

const ALLOWED = new Set([
  'PATH',
  'LANG',
  'TZ',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'GIT_SSL_CAINFO',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'XDG_RUNTIME_DIR',
]);

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function childEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (ALLOWED.has(name) || /^LC_[A-Z_]+$/.test(name)) out[name] = value;
  }
  out.PATH ??= DEFAULT_PATH;
  return out;
}
