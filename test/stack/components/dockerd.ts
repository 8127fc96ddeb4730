// A dockerd per builder (trixie's docker.io, from /opt/ibs-docker), each with its own data-root,
// exec-root, pidfile and socket, the containerd image store (needed by BuildKit's image exporter) and
// a Linux bridge for RUN steps. Each supervises its own containerd (bookworm's, found in PATH).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { DOCKER_BIN_DIR, type Layout } from '../layout.js';
import { type DetachedSpec, baseEnv, markedPids, run, stopComponent } from '../proc.js';
import { ensureDaemon } from './daemon.js';
import { BUILDER_IDS, type BuilderId, type Engine, engine, execRoot, linuxBridgeOf } from './engines.js';
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

function bridgeExists(name: string): boolean {
  return fs.existsSync(`/sys/class/net/${name}`);
}

async function ensureBridge(l: Layout, id: BuilderId): Promise<string> {
  const { name, cidr } = linuxBridgeOf(l, id);
  if (!bridgeExists(name)) {
    await run('ip', ['link', 'add', 'name', name, 'type', 'bridge']);
    await run('ip', ['addr', 'add', cidr, 'dev', name]);
  }
  await run('ip', ['link', 'set', name, 'up']);
  return name;
}

async function removeBridge(l: Layout, id: BuilderId): Promise<void> {
  const { name } = linuxBridgeOf(l, id);
  if (bridgeExists(name)) await run('ip', ['link', 'del', name]).catch(() => undefined);
}

/** Unmounts whatever dockerd/containerd left mounted under its directory (after a crash). */
function unmountLeftovers(dir: string): void {
  const mounts = fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)));
  // Deepest first.
  for (const m of mounts.sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      /* best effort */
    }
  }
}

/** Kills what a crashed dockerd left (its containerd, shims), which would hold the data root. */
function killLeftovers(l: Layout, e: Engine): void {
  for (const pid of markedPids(l)) {
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (!cmd.includes(`${e.dir}/`)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

async function dockerdSpec(l: Layout, e: Engine): Promise<DetachedSpec> {
  const dockerdBin = path.join(DOCKER_BIN_DIR, 'dockerd');
  if (!fs.existsSync(dockerdBin)) throw new Error(`${dockerdBin} missing: run bash .ci/install.sh`);
  const exec = execRoot(e);
  const containerdSock = path.join(exec, 'containerd', 'containerd.sock.ttrpc');
  if (containerdSock.length > UNIX_PATH_MAX || e.socket.length > UNIX_PATH_MAX)
    throw new Error(`IBS_STACK_DIR ${l.root} is too long for unix socket paths`);
  killLeftovers(l, e);
  unmountLeftovers(e.dir);
  fs.mkdirSync(path.join(e.dir, 'data'), { recursive: true });
  fs.mkdirSync(exec, { recursive: true });
  fs.rmSync(e.socket, { force: true });
  const bridge = await ensureBridge(l, e.id);
  // Network state from an earlier run (possibly with another bridge) makes dockerd refuse to
  // start; the stack keeps no networks of its own, so start with a fresh network store.
  fs.rmSync(path.join(e.dir, 'data', 'network'), { recursive: true, force: true });
  const daemonJson = path.join(e.dir, 'daemon.json');
  fs.writeFileSync(
    daemonJson,
    JSON.stringify({ features: { 'containerd-snapshotter': true }, 'log-level': 'warn' }, null, 2),
  );
  return {
    name: e.dockerdName,
    cmd: dockerdBin,
    args: [
      '--config-file',
      daemonJson,
      '--data-root',
      path.join(e.dir, 'data'),
      '--exec-root',
      exec,
      '--pidfile',
      path.join(e.dir, 'dockerd.pid'),
      '--host',
      `unix://${e.socket}`,
      `--bridge=${bridge}`,
      '--iptables=false',
      '--ip-forward=false',
    ],
    // Its BuildKit keeps a RUN step's whole output (by default it clips it: 2 MiB, and 200 KiB
    // per second of the step, in current releases): bench:redis measures a build printing 50 MB.
    env: baseEnv({ BUILDKIT_STEP_LOG_MAX_SIZE: '-1', BUILDKIT_STEP_LOG_MAX_SPEED: '-1' }),
  };
}

function dockerdComponent(id: BuilderId): Component {
  return {
    name: id === 'a' ? 'dockerd' : `dockerd-${id}`,
    deps: [],
    daemons: [id === 'a' ? 'dockerd' : `dockerd-${id}`],
    engine: true,
    ensure: ({ l }: Ctx) => {
      const e = engine(l, id);
      return ensureDaemon(l, {
        name: e.dockerdName,
        timeoutMs: 30_000,
        healthy: () => dockerPing(e.socket),
        prepare: () => dockerdSpec(l, e),
      });
    },
    cleanup: async ({ l }: Ctx) => {
      // dockerd stops its containerd on SIGTERM; make sure, then release mounts.
      await stopComponent(l, engine(l, id).dockerdName, 15_000);
      unmountLeftovers(engine(l, id).dir);
      await removeBridge(l, id);
    },
  };
}

/** Builder a's engine (STACK_DOCKER_HOST) and builder b's (STACK_DOCKER_HOST_B). */
export const dockerds: readonly Component[] = BUILDER_IDS.map(dockerdComponent);
