// dockerd (trixie's docker.io, from /opt/ibs-docker) with its own data-root, exec-root, pidfile and
// socket, the containerd image store (needed by BuildKit's image exporter) and a bridge for RUN
// steps. It supervises its own containerd (bookworm's, found in PATH).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { DOCKER_BIN_DIR, type Layout } from '../layout.js';
import { baseEnv, markedPids, run, stopComponent } from '../proc.js';
import { ensureDaemon } from './daemon.js';
import type { Component, Ctx } from './types.js';

const UNIX_PATH_MAX = 107;

export function dockerPing(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

/** Each stack dir gets its own bridge (name and /24 derived from the dir), so stacks don't share docker0. */
export function bridgeOf(l: Layout): { name: string; cidr: string } {
  const h = crypto.createHash('sha256').update(l.root).digest();
  return { name: `ibs${h.toString('hex').slice(0, 8)}`, cidr: `10.${200 + (h[4]! % 50)}.${h[5]!}.1/24` };
}

function bridgeExists(name: string): boolean {
  return fs.existsSync(`/sys/class/net/${name}`);
}

async function ensureBridge(l: Layout): Promise<string> {
  const { name, cidr } = bridgeOf(l);
  if (!bridgeExists(name)) {
    await run('ip', ['link', 'add', 'name', name, 'type', 'bridge']);
    await run('ip', ['addr', 'add', cidr, 'dev', name]);
  }
  await run('ip', ['link', 'set', name, 'up']);
  return name;
}

async function removeBridge(l: Layout): Promise<void> {
  const { name } = bridgeOf(l);
  if (bridgeExists(name)) await run('ip', ['link', 'del', name]).catch(() => undefined);
}

/** Unmounts whatever dockerd/containerd left mounted under the stack dir (after a crash). */
function unmountLeftovers(l: Layout): void {
  const mounts = fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === l.docker || m.startsWith(`${l.docker}/`)));
  // Deepest first.
  for (const m of mounts.sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      /* best effort */
    }
  }
}

export const dockerd: Component = {
  name: 'dockerd',
  deps: [],
  daemons: ['dockerd'],
  ensure: ({ l }: Ctx) =>
    ensureDaemon(l, {
      name: 'dockerd',
      timeoutMs: 30_000,
      healthy: () => dockerPing(l.dockerSocket),
      prepare: async () => {
        const dockerdBin = path.join(DOCKER_BIN_DIR, 'dockerd');
        if (!fs.existsSync(dockerdBin)) throw new Error(`${dockerdBin} missing: run bash .ci/install.sh`);
        const execRoot = path.join(l.docker, 'exec');
        const containerdSock = path.join(execRoot, 'containerd', 'containerd.sock.ttrpc');
        if (containerdSock.length > UNIX_PATH_MAX || l.dockerSocket.length > UNIX_PATH_MAX)
          throw new Error(`IBS_STACK_DIR ${l.root} is too long for unix socket paths`);
        // Leftovers of a crashed daemon (its containerd, shims) would hold the data root.
        for (const pid of markedPids(l)) {
          const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
          if (cmd.includes(`${l.docker}/`)) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              /* gone */
            }
          }
        }
        unmountLeftovers(l);
        fs.mkdirSync(path.join(l.docker, 'data'), { recursive: true });
        fs.mkdirSync(execRoot, { recursive: true });
        fs.rmSync(l.dockerSocket, { force: true });
        const bridge = await ensureBridge(l);
        // Network state from an earlier run (possibly with another bridge) makes dockerd refuse to
        // start; the stack keeps no networks of its own, so start with a fresh network store.
        fs.rmSync(path.join(l.docker, 'data', 'network'), { recursive: true, force: true });
        const daemonJson = path.join(l.docker, 'daemon.json');
        fs.writeFileSync(
          daemonJson,
          JSON.stringify({ features: { 'containerd-snapshotter': true }, 'log-level': 'warn' }, null, 2),
        );
        return {
          name: 'dockerd',
          cmd: dockerdBin,
          args: [
            '--config-file',
            daemonJson,
            '--data-root',
            path.join(l.docker, 'data'),
            '--exec-root',
            execRoot,
            '--pidfile',
            path.join(l.docker, 'dockerd.pid'),
            '--host',
            `unix://${l.dockerSocket}`,
            `--bridge=${bridge}`,
            '--iptables=false',
            '--ip-forward=false',
          ],
          // Its BuildKit keeps a RUN step's whole output (by default it clips it: 2 MiB, and 200 KiB
          // per second of the step, in current releases): bench:redis measures a build printing 50 MB.
          env: baseEnv({ BUILDKIT_STEP_LOG_MAX_SIZE: '-1', BUILDKIT_STEP_LOG_MAX_SPEED: '-1' }),
        };
      },
    }),
  cleanup: async ({ l }: Ctx) => {
    // dockerd stops its containerd on SIGTERM; make sure, then release mounts.
    await stopComponent(l, 'dockerd', 15_000);
    unmountLeftovers(l);
    await removeBridge(l);
  },
};
