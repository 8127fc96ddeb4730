// The git servers, all serving $STACK_DIR/git/repos:
//   git-https: HTTPS with Basic auth and a certificate from the stack's own CA (servers/git-http.ts)
//   git-http:  plain HTTP, anonymous (same server); under /no-filter/ without partial clone support
//   git-daemon: git:// (`git daemon`)
//   git-ssh:   bookworm's sshd on a loopback port, key auth only, as root
import fs from 'node:fs';
import path from 'node:path';
import type { Layout } from '../layout.js';
import { baseEnv, run, tcpOpen } from '../proc.js';
import { claimPort, type PortName, type State } from '../state.js';
import { ensureDaemon, httpStatus } from './daemon.js';
import { keyPaths } from './keys.js';
import { nodeServer } from './node-script.js';
import type { Component, Ctx } from './types.js';

function gitHttp(name: 'git-https' | 'git-http', portName: PortName): Component {
  const tls = name === 'git-https';
  return {
    name,
    deps: ['keys', 'fixtures'],
    daemons: [name],
    ensure: ({ l, s }: Ctx) =>
      ensureDaemon(l, {
        name,
        healthy: async () => {
          if (!tls) return (await httpStatus(`http://127.0.0.1:${s.ports[portName]}/`)) !== undefined;
          return tcpOpen(s.ports[portName]);
        },
        prepare: async () => {
          const port = await claimPort(l, s, portName);
          const k = keyPaths(l);
          const file = path.join(l.git, `${name}.json`);
          const config = {
            port,
            projectRoot: l.repos,
            ...(tls
              ? {
                  tls: { keyFile: k.serverKey, certFile: k.serverCert },
                  auth: { user: s.credentials.gitHttpsUser, password: s.credentials.gitHttpsPassword },
                }
              : {}),
          };
          fs.mkdirSync(l.git, { recursive: true });
          fs.writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
          return nodeServer(name, 'git-http.ts', [file]);
        },
      }),
  };
}

export const gitDaemon: Component = {
  name: 'git-daemon',
  deps: ['fixtures'],
  daemons: ['git-daemon'],
  ensure: ({ l, s }: Ctx) =>
    ensureDaemon(l, {
      name: 'git-daemon',
      healthy: () => tcpOpen(s.ports.gitDaemon),
      prepare: async () => {
        const port = await claimPort(l, s, 'gitDaemon');
        return {
          name: 'git-daemon',
          cmd: 'git',
          args: [
            'daemon',
            '--reuseaddr',
            '--listen=127.0.0.1',
            `--port=${port}`,
            `--base-path=${l.repos}`,
            '--export-all',
            '--informative-errors',
            l.repos,
          ],
          env: baseEnv(),
        };
      },
    }),
};

export function sshPaths(l: Layout) {
  return {
    config: path.join(l.ssh, 'sshd_config'),
    authorizedKeys: path.join(l.ssh, 'authorized_keys'),
    knownHosts: path.join(l.ssh, 'known_hosts'),
    pid: path.join(l.ssh, 'sshd.pid'),
  };
}

/** `[127.0.0.1]:PORT ssh-ed25519 AAAA...` for the stack's sshd. */
export function sshHostKeyLine(l: Layout, s: State): string {
  const pub = fs
    .readFileSync(`${keyPaths(l).sshHostKey}.pub`, 'utf8')
    .trim()
    .split(/\s+/);
  return `[127.0.0.1]:${s.ports.gitSsh} ${pub[0]} ${pub[1]}`;
}

export async function sshHostKeyFingerprint(l: Layout): Promise<string> {
  const { stdout } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyPaths(l).sshHostKey}.pub`]);
  const fp = stdout.split(/\s+/)[1];
  if (!fp) throw new Error(`cannot read the host key fingerprint: ${stdout}`);
  return fp;
}

export const gitSsh: Component = {
  name: 'git-ssh',
  deps: ['keys', 'fixtures'],
  daemons: ['git-ssh'],
  ensure: async ({ l, s }: Ctx) => {
    const outcome = await ensureDaemon(l, {
      name: 'git-ssh',
      healthy: () => tcpOpen(s.ports.gitSsh),
      prepare: async () => {
        const port = await claimPort(l, s, 'gitSsh');
        const k = keyPaths(l);
        const p = sshPaths(l);
        fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
        fs.copyFileSync(`${k.sshClientKey}.pub`, p.authorizedKeys);
        fs.chmodSync(p.authorizedKeys, 0o600);
        fs.writeFileSync(
          p.config,
          [
            `Port ${port}`,
            'ListenAddress 127.0.0.1',
            `HostKey ${k.sshHostKey}`,
            `AuthorizedKeysFile ${p.authorizedKeys}`,
            `PidFile ${p.pid}`,
            'PermitRootLogin prohibit-password',
            'PubkeyAuthentication yes',
            'PasswordAuthentication no',
            'KbdInteractiveAuthentication no',
            'UsePAM no',
            'StrictModes no',
            'X11Forwarding no',
            'AllowTcpForwarding no',
            'PrintMotd no',
            'LogLevel INFO',
            'Subsystem sftp internal-sftp',
            // Protocol v2 (what git asks for with GIT_PROTOCOL): partial clones fetch blobs by id.
            'AcceptEnv GIT_PROTOCOL',
            '',
          ].join('\n'),
        );
        return { name: 'git-ssh', cmd: '/usr/sbin/sshd', args: ['-D', '-e', '-f', p.config], env: baseEnv() };
      },
    });
    fs.writeFileSync(sshPaths(l).knownHosts, `${sshHostKeyLine(l, s)}\n`);
    return outcome;
  },
};

export const gitServers: Component[] = [
  gitHttp('git-https', 'gitHttps'),
  gitHttp('git-http', 'gitHttp'),
  gitDaemon,
  gitSsh,
];
