// A real Redis Cluster from Debian's redis-server, for the stack and for tests that start their own:
// each node's config (cluster mode, the one password, no persistence), free ports for its nodes
// (each node's bus listens on its port + 10000), `redis-cli --cluster create`, and a check that
// every node sees the whole cluster ready. The password reaches redis-cli in its environment
// (REDISCLI_AUTH), never in argv.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { portFree } from './proc.js';
import { writeRedisConfig } from './redis-server.js';

const run = promisify(execFile);

/** The cluster bus of a node listens on its port plus this. */
export const BUS_OFFSET = 10_000;
const LOW_PORT = 20_000;
const HIGH_PORT = 32_000;

/** Writes the config of the node on `port` in `<dir>/<port>/redis.conf`; returns its path. */
export function writeClusterNodeConfig(dir: string, port: number, password: string): string {
  return writeRedisConfig(path.join(dir, String(port)), port, password, [
    'cluster-enabled yes',
    'cluster-config-file nodes.conf',
    'cluster-node-timeout 3000',
    `masterauth ${password}`,
    // No node takes the whole cluster down when one slot range has no master for a moment.
    'cluster-require-full-coverage no',
  ]);
}

/** `count` ports free now, each with its bus port free too (below the ephemeral range). */
export async function freeClusterPorts(
  count: number,
  avoid: ReadonlySet<number> = new Set(),
): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 500; attempt++) {
    const port = LOW_PORT + Math.floor(Math.random() * (HIGH_PORT - LOW_PORT));
    if (ports.includes(port) || avoid.has(port) || ports.some((p) => Math.abs(p - port) === BUS_OFFSET))
      continue;
    if ((await portFree(port)) && (await portFree(port + BUS_OFFSET))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`could not find ${count} free ports for a Redis Cluster`);
  return ports;
}

const cliEnv = (password: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, REDISCLI_AUTH: password });

/** Joins the nodes into one cluster (`replicas` replicas per master: 0, or 1 with twice the nodes). */
export async function createCluster(ports: readonly number[], password: string, replicas = 0): Promise<void> {
  await run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ],
    { env: cliEnv(password), timeout: 60_000 },
  );
}

/** The node's `CLUSTER INFO` fields, or undefined when it does not answer. */
async function clusterInfo(port: number, password: string): Promise<Map<string, string> | undefined> {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info'], {
      env: cliEnv(password),
      timeout: 3000,
    });
    return new Map(
      stdout
        .split(/\r?\n/)
        .filter((line) => line.includes(':'))
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
    );
  } catch {
    return undefined;
  }
}

/** Whether the node on `port` sees the cluster ok with `nodes` nodes known. */
export async function clusterNodeReady(port: number, password: string, nodes: number): Promise<boolean> {
  const info = await clusterInfo(port, password);
  return info?.get('cluster_state') === 'ok' && info.get('cluster_known_nodes') === String(nodes);
}

/** Whether the node on `port` answers and knows no other node (it was never joined). */
export async function clusterNodeAlone(port: number, password: string): Promise<boolean> {
  return (await clusterInfo(port, password))?.get('cluster_known_nodes') === '1';
}

/** Whether every node sees the whole cluster ready. */
export async function clusterReady(ports: readonly number[], password: string): Promise<boolean> {
  const ready = await Promise.all(ports.map((port) => clusterNodeReady(port, password, ports.length)));
  return ready.every(Boolean);
}
