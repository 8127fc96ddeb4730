/**
 * Git credential resolution (pure; docs/behaviour.md, Image names, registries, credentials).
 * https/http: the request's `gitCredentials`, else a server entry of kind `https`; ssh and SCP-style:
 * a server entry of kind `ssh`; git://: none. Entries match the host case-insensitively and, when they
 * name a port, the URL's (or its scheme's default); one with a port wins. Pinned policy: an ssh URL
 * without a credential carrying `pinnedHostKey` is refused (HOST_KEY_NOT_PINNED, docs/errors.md).
 */
import type { Config, GitCredential } from '../../src/config/types.js';
import { formatKnownHostsLine, keyLines, parseKnownHostsLine } from '../../src/config/known-hosts.js';
import { serviceError } from '../../src/errors/errors.js';
import type { PlannedGitCredential, RepoUrl } from './plan-types.js';
import { knownHostsName } from './repo-url.js';

const DEFAULT_PORTS: Record<RepoUrl['scheme'], number> = { https: 443, http: 80, ssh: 22, git: 9418 };

export interface RequestGitCredentials {
  username: string;
  token: string;
}

export function resolveGitCredential(
  url: RepoUrl,
  fromRequest: RequestGitCredentials | undefined,
  config: Pick<Config, 'gitCredentials' | 'sshHostKeyPolicy'>,
): PlannedGitCredential | undefined {
  if (url.scheme === 'git') return undefined;
  if (url.scheme === 'https' || url.scheme === 'http') {
    if (fromRequest) return { kind: 'https', username: fromRequest.username, token: fromRequest.token };
    const entry = findEntry(config.gitCredentials, url, 'https');
    return entry ? { kind: 'https', username: entry.username, token: entry.token } : undefined;
  }
  const entry = findEntry(config.gitCredentials, url, 'ssh');
  if (config.sshHostKeyPolicy === 'pinned') {
    const pinned = entry?.pinnedHostKey?.trim();
    if (!entry || !pinned)
      throw serviceError('HOST_KEY_NOT_PINNED', {
        host: url.port === undefined ? url.host : `${url.host}:${url.port}`,
      });
    return { kind: 'ssh', privateKey: entry.privateKey, pinnedHostKey: knownHostsLines(pinned, url) };
  }
  return entry ? { kind: 'ssh', privateKey: entry.privateKey } : undefined;
}

function findEntry<K extends GitCredential['kind']>(
  entries: readonly GitCredential[],
  url: RepoUrl,
  kind: K,
): Extract<GitCredential, { kind: K }> | undefined {
  const port = url.port ?? DEFAULT_PORTS[url.scheme];
  const candidates = entries.filter(
    (e): e is Extract<GitCredential, { kind: K }> =>
      e.kind === kind && e.host.toLowerCase() === url.host && (e.port === undefined || e.port === port),
  );
  return candidates.find((e) => e.port !== undefined) ?? candidates[0];
}

/**
 * The pinned key as known_hosts lines for the host ssh will name (`host` or `[host]:port`):
 * a bare `ssh-ed25519 AAAA... [comment]` gets the host field; a line with a host field gets it
 * replaced (the entry was already matched by host and port); `@cert-authority`/`@revoked`
 * lines stay as written. The configuration accepted only key lines (config/known-hosts.ts).
 */
function knownHostsLines(pinnedHostKey: string, url: Pick<RepoUrl, 'host' | 'port'>): string {
  const name = knownHostsName(url);
  return keyLines(pinnedHostKey)
    .map((text) => {
      const line = parseKnownHostsLine(text);
      if (line === undefined || line.marker !== undefined) return text;
      return formatKnownHostsLine(line, name);
    })
    .join('\n');
}
