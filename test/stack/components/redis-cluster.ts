// A real three-master Redis Cluster of Debian's redis-server on loopback ports, with the stack's
// Redis password and no persistence (each node keeps only its nodes.conf, so a node started again
// rejoins): the service's Redis Cluster mode (STACK_REDIS_CLUSTER_NODES and
// STACK_REDIS_CLUSTER_PASSWORD_FILE in the stack's env). Joined once by `redis-cli --cluster create`.
import fs from 'node:fs';
import path from 'node:path';
import type { Layout } from '../layout.js';
import { baseEnv, portFree, waitFor } from '../proc.js';
import {
  BUS_OFFSET,
  clusterNodeAlone,
  clusterReady,
  createCluster,
  writeClusterNodeConfig,
} from '../redis-cluster.js';
import { redisAnswers } from '../redis-server.js';
import { claimPort, type PortName, type State } from '../state.js';
import { ensureDaemon } from './daemon.js';
import type { Component, Ctx, Outcome } from './types.js';

export const REDIS_CLUSTER_PORTS: readonly PortName[] = ['redisCluster0', 'redisCluster1', 'redisCluster2'];

const dirOf = (l: Layout): string => path.join(l.root, 'redis-cluster');
/** The file holding the nodes' password (REDIS_PASSWORD_FILE of a service on the cluster). */
export const clusterPasswordFile = (l: Layout): string => path.join(dirOf(l), 'password');

function node(l: Layout, s: State, name: PortName) {
  return ensureDaemon(l, {
    name,
    healthy: () => redisAnswers(s.ports[name], s.credentials.redisPassword),
    prepare: async () => {
      const port = await claimPort(l, s, name);
      if (!(await portFree(port + BUS_OFFSET)))
        throw new Error(`${name}: the cluster bus port ${port + BUS_OFFSET} is taken`);
      const file = writeClusterNodeConfig(dirOf(l), port, s.credentials.redisPassword);
      return { name, cmd: 'redis-server', args: [file], env: baseEnv() };
    },
  });
}

async function ensureCluster({ l, s }: Ctx): Promise<Outcome> {
  const outcomes = await Promise.all(REDIS_CLUSTER_PORTS.map((name) => node(l, s, name)));
  fs.writeFileSync(clusterPasswordFile(l), `${s.credentials.redisPassword}\n`, { mode: 0o600 });
  const ports = REDIS_CLUSTER_PORTS.map((name) => s.ports[name]);
  const password = s.credentials.redisPassword;
  if (await clusterReady(ports, password))
    return outcomes.every((o) => o === 'reused') ? 'reused' : 'started';
  // Nodes that know only themselves were never joined: join them. Joined nodes started again
  // rejoin by their nodes.conf.
  const alone = await Promise.all(ports.map((port) => clusterNodeAlone(port, password)));
  if (alone.every(Boolean)) await createCluster(ports, password, 0);
  await waitFor('the Redis Cluster', () => clusterReady(ports, password), { timeoutMs: 30_000 });
  return 'started';
}

export const redisCluster: Component = {
  name: 'redis-cluster',
  deps: [],
  daemons: REDIS_CLUSTER_PORTS,
  ensure: ensureCluster,
};
