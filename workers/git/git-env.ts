/**
 * The hardened environment and argv of every git (and, through git, ssh) process (pure):
 * - only allowlisted variables; no system or global config, a per-request HOME, no terminal prompt;
 * - transports by GIT_ALLOW_PROTOCOL, never `file`; no hooks, submodules or credential helper
 *   (GIT_CONFIG_* variables, the environment form of `git -c`, so argv stays the plain command);
 * - an https credential only in a per-request 0600 global config file (credentialConfig);
 * - ssh with no config file, batch mode, only our identity, an explicit known_hosts.
 */
import { basicAuthHeader } from '../../src/secrets/basic-auth.js';
// Paths in GIT_SSH_COMMAND are single-quoted: git runs it with `sh -c`.
import { shellQuote } from '../../src/rules/shell-quote.js';
import type { KnownHosts } from './host-keys.js';

/** Configuration forced on every git process (`git -c key=value`, via GIT_CONFIG_COUNT). */
const HARDENED_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['protocol.file.allow', 'never'],
  ['protocol.ext.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['credential.helper', ''],
  ['core.fsmonitor', 'false'],
  ['advice.detachedHead', 'false'],
];

export interface GitEnvOptions {
  /** config.childEnv. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly allowInsecureProtocols: boolean;
  /** Per-request HOME. */
  readonly home: string;
  readonly knownHosts: KnownHosts;
  /** Per-request 0600 private key file, when an ssh credential applies. */
  readonly sshKeyFile?: string;
  /** Per-request 0600 git config file (GIT_CONFIG_GLOBAL) holding the https credential, when one applies. */
  readonly credentialConfigFile?: string;
}

export function sshCommand(knownHosts: KnownHosts, keyFile?: string): string {
  const parts = [
    'ssh',
    '-F /dev/null',
    '-o BatchMode=yes',
    '-o IdentitiesOnly=yes',
    '-o IdentityAgent=none',
    ...(keyFile === undefined ? [] : [`-i ${shellQuote(keyFile)}`]),
    `-o UserKnownHostsFile=${shellQuote(knownHosts.file)}`,
    '-o GlobalKnownHostsFile=/dev/null',
    `-o StrictHostKeyChecking=${knownHosts.strictHostKeyChecking}`,
    '-o UpdateHostKeys=no',
    '-o HashKnownHosts=no',
  ];
  return parts.join(' ');
}

export function gitEnv(options: GitEnvOptions): Record<string, string> {
  const env: Record<string, string> = {
    ...options.baseEnv,
    HOME: options.home,
    // Anything git writes for itself stays in the request's scratch directory.
    TMPDIR: options.home,
    XDG_CONFIG_HOME: `${options.home}/.config`,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: options.credentialConfigFile ?? '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: options.allowInsecureProtocols ? 'https:ssh:git:http' : 'https:ssh',
    GIT_SSH_COMMAND: sshCommand(options.knownHosts, options.sshKeyFile),
    GIT_SSH_VARIANT: 'ssh',
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_CONFIG_COUNT: '0',
  };
  // Never let an inherited askpass or ssh setting through.
  delete env.GIT_ASKPASS;
  delete env.SSH_ASKPASS;
  delete env.SSH_AUTH_SOCK;
  return withGitConfig(env, HARDENED_GIT_CONFIG);
}

/**
 * `env` with `pairs` appended to its GIT_CONFIG_COUNT/KEY/VALUE list (pure): the environment form
 * of `git -c key=value`, seen by git and every git it starts, never written to a config file.
 */
export function withGitConfig(
  env: Readonly<Record<string, string>>,
  pairs: ReadonlyArray<readonly [string, string]>,
): Record<string, string> {
  const first = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10) || 0;
  const result: Record<string, string> = { ...env, GIT_CONFIG_COUNT: String(first + pairs.length) };
  pairs.forEach(([key, value], index) => {
    result[`GIT_CONFIG_KEY_${first + index}`] = key;
    result[`GIT_CONFIG_VALUE_${first + index}`] = value;
  });
  return result;
}

/**
 * `git clone --config core.sparseCheckout=true --config core.sparseCheckoutCone=false --filter=blob:none
 * --no-checkout --depth 1 --single-branch --no-tags [--branch B] -- URL DIR`: the commit and its trees, no
 * file content, no working tree (clone.ts checks out what the build reads). The clone is created sparse
 * (non-cone: sparse-patterns.ts), so no `git config` process runs later.
 */
export function cloneArgs(cloneUrl: string, dir: string, branch?: string): string[] {
  return [
    'clone',
    '--config',
    'core.sparseCheckout=true',
    '--config',
    'core.sparseCheckoutCone=false',
    '--filter=blob:none',
    '--no-checkout',
    '--depth',
    '1',
    '--single-branch',
    '--no-tags',
    ...(branch === undefined ? [] : ['--branch', branch]),
    '--',
    cloneUrl,
    dir,
  ];
}

/**
 * The per-request global git config carrying an https credential: an `Authorization: Basic`
 * header scoped to the repository's origin (`http.<origin>/.extraHeader`), so git sends it
 * with its first request (no 401 round trip, no prompt helper). curl never forwards it to
 * another host on a redirect. The file is 0600 and deleted right after the clone; the
 * clone's own .git/config never sees it.
 */
export function credentialConfig(origin: string, username: string, token: string): string {
  return `[http "${origin}/"]\n\textraHeader = Authorization: ${basicAuthHeader(username, token)}\n`;
}

/** `https://host[:port]` of a parsed repository URL (IPv6 in brackets). */
export function repoOrigin(url: { scheme: string; host: string; port?: number }): string {
  const host = url.host.includes(':') ? `[${url.host}]` : url.host;
  return `${url.scheme}://${host}${url.port === undefined ? '' : `:${url.port}`}`;
}
