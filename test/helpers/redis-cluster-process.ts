/**
 * A Redis Cluster of a test's own (Debian's redis-server, not the stack's): three masters (and a
 * replica each when asked) on free loopback ports with one random password, joined by
 * `redis-cli --cluster create`; resolves once every node sees the cluster ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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

export interface RedisClusterProcess {
  /** `127.0.0.1:port` of every node (masters first). */
  readonly nodes: readonly string[];
  readonly password: string;
  /** A file holding the password (REDIS_PASSWORD_FILE of a service process), removed with the cluster. */
  readonly passwordFile: string;
  /** What the service is given (`redis.clusterNodes`, the password). */
  readonly target: RedisTarget;
  /** Stops every node for good and removes their directory. */
  dispose(): Promise<void>;
}

const MASTERS = 3;

export async function startRedisCluster(options: { replicas?: 0 | 1 } = {}): Promise<RedisClusterProcess> {
  const replicas = options.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'ibs-redis-cluster-'));
  const password = `canary-${randomBytes(12).toString('hex')}`;
  const children: ChildProcess[] = [];
  const exits: Promise<void>[] = [];
  const dispose = async (): Promise<void> => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(exits);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await freeClusterPorts(MASTERS * (1 + replicas));
    for (const port of ports) {
      const child = spawn('redis-server', [writeClusterNodeConfig(dir, port, password)], { stdio: 'ignore' });
      children.push(child);
      exits.push(new Promise((resolve) => child.once('exit', () => resolve())));
    }
    await eventually(
      async () => (await Promise.all(ports.map((port) => redisAnswers(port, password, 500)))).every(Boolean),
      { interval: 50, what: 'the cluster nodes to answer' },
    );
    await createCluster(ports, password, replicas);
    await eventually(() => clusterReady(ports, password), {
      timeout: 30_000,
      interval: 200,
      what: 'the Redis Cluster to be ready',
    });
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    return {
      nodes,
      password,
      passwordFile,
      target: {
        kind: 'cluster',
        nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
        password,
        tls: false,
      },
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
