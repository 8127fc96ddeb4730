/**
 * A Redis Cluster of a test's own (Debian's redis-server, not the stack's): three masters (and a
 * replica each when asked) on free loopback ports with one random password, joined by
 * `redis-cli --cluster create`; resolves once every node sees the cluster ready. An outage stops
 * every node and starts them again, each with its nodes.conf, so that the same cluster forms again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisTarget } from '../../src/config/redis-target.js';
import {
  clusterReady,
  createCluster,
  freeClusterPorts,
  writeClusterNodeConfig,
} from '../stack/redis-cluster.js';
import { redisAnswers } from '../stack/redis-server.js';
import { eventually } from './eventually.js';
import { NodeProcess } from './redis-node-process.js';

export interface RedisClusterProcess {
  /** `127.0.0.1:port` of every node (masters first). */
  readonly nodes: readonly string[];
  readonly password: string;
  /** A file holding the password (REDIS_PASSWORD_FILE of a service process), removed with the cluster. */
  readonly passwordFile: string;
  /** What the service is given (`redis.clusterNodes`, the password). */
  readonly target: RedisTarget;
  /** Kills every node (SIGKILL: the whole cluster lost at once); resolves once all have exited. */
  stop(): Promise<void>;
  /** Starts every node again with its nodes.conf (no data: no persistence); resolves once ready. */
  start(): Promise<void>;
  /** Stops every node for good and removes their directory. */
  dispose(): Promise<void>;
}

const MASTERS = 3;

/** Starts `nodes`; resolves once each answers and every one sees the cluster ready (`form` between). */
async function startNodes(
  nodes: readonly NodeProcess[],
  password: string,
  form: () => Promise<void> = async () => undefined,
): Promise<void> {
  const ports = nodes.map((node) => node.port);
  for (const node of nodes) node.start();
  await eventually(
    async () => (await Promise.all(ports.map((port) => redisAnswers(port, password, 500)))).every(Boolean),
    { interval: 50, what: 'the cluster nodes to answer' },
  );
  await form();
  await eventually(() => clusterReady(ports, password), {
    timeout: 30_000,
    interval: 200,
    what: 'the Redis Cluster to be ready',
  });
}

export async function startRedisCluster(options: { replicas?: 0 | 1 } = {}): Promise<RedisClusterProcess> {
  const replicas = options.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'ibs-redis-cluster-'));
  const password = `canary-${randomBytes(12).toString('hex')}`;
  let nodes: NodeProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.kill()));
  };
  const dispose = async (): Promise<void> => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await freeClusterPorts(MASTERS * (1 + replicas));
    nodes = ports.map((port) => new NodeProcess(port, [writeClusterNodeConfig(dir, port, password)]));
    await startNodes(nodes, password, () => createCluster(ports, password, replicas));
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    return {
      nodes: ports.map((port) => `127.0.0.1:${port}`),
      password,
      passwordFile,
      target: {
        kind: 'cluster',
        nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
        password,
        tls: false,
      },
      stop,
      start: () => startNodes(nodes, password),
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
