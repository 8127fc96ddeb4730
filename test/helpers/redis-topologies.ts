/**
 * Redis topologies of a test's own that fail over (Debian's redis-server, never the stack's): a
 * Cluster of three masters with a replica each, or a primary, its replica and three Sentinels. A
 * failover SIGKILLs the primary that holds the build queue (`{queue}`), waits until its replica is
 * promoted, then starts the killed node again, which comes back as the new primary's replica (the
 * data is its primary's: no persistence). Memory can be made full (maxmemory below what is used).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { QUEUE_KEYS } from '../../src/redis/keys.js';
import {
  clusterReady,
  createCluster,
  freeClusterPorts,
  writeClusterNodeConfig,
} from '../stack/redis-cluster.js';
import { freePort } from '../stack/proc.js';
import { redisAnswers, writeRedisConfig } from '../stack/redis-server.js';
import { eventually } from './eventually.js';
import { NodeProcess } from './redis-node-process.js';
import { namedPrimaries, PRIMARY_NAME, writeSentinelConfig } from './redis-sentinel-process.js';

export interface RedisTopology {
  readonly kind: 'cluster' | 'sentinel';
  /** What a service process is given: its nodes or Sentinels, and REDIS_PASSWORD_FILE. */
  readonly env: Record<string, string>;
  /**
   * SIGKILLs the primary holding the queue; resolves with the ms from the kill until its replica
   * was promoted (every Sentinel names it, or the Cluster serves the slot from it), once the killed
   * node runs again as a replica.
   */
  failover(): Promise<number>;
  /** Sets every primary's maxmemory below what it uses (writes answer OOM); resolves with the undo. */
  fillMemory(): Promise<() => Promise<void>>;
  dispose(): Promise<void>;
}

/** A client to one node, for the test's own commands (never the service's). */
async function onNode<T>(port: number, password: string, act: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await act(r);
  } finally {
    r.disconnect();
  }
}

async function usedMemory(port: number, password: string): Promise<number> {
  const info = await onNode(port, password, (r) => r.info('memory'));
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/** Sets maxmemory on each of `ports` to 9/10 of what it uses; the undo sets 0 (no limit) back. */
async function fill(ports: readonly number[], password: string): Promise<() => Promise<void>> {
  for (const port of ports) {
    const used = await usedMemory(port, password);
    await onNode(port, password, (r) => r.config('SET', 'maxmemory', String(Math.floor(used * 0.9))));
  }
  return async () => {
    for (const port of ports) await onNode(port, password, (r) => r.config('SET', 'maxmemory', '0'));
  };
}

function newDir(kind: string): { dir: string; password: string; passwordFile: string } {
  const dir = mkdtempSync(join(tmpdir(), `ibs-redis-${kind}-`));
  const password = `canary-${randomBytes(12).toString('hex')}`;
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  return { dir, password, passwordFile };
}

const answer = (ports: readonly number[], password: string): Promise<void> =>
  eventually(
    async () => (await Promise.all(ports.map((port) => redisAnswers(port, password, 500)))).every(Boolean),
    { interval: 100, what: 'the Redis nodes to answer' },
  ).then(() => undefined);

/** The port of the master serving the queue's slot, as the node on `askPort` sees it. */
async function queueMaster(askPort: number, password: string): Promise<number | undefined> {
  return onNode(askPort, password, async (r) => {
    const slot = Number(await r.cluster('KEYSLOT', QUEUE_KEYS[0] ?? ''));
    const ranges = (await r.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
    const range = ranges.find(([from, to]) => from <= slot && slot <= to);
    const info = await r.cluster('INFO');
    return /cluster_state:ok/.test(String(info)) ? range?.[2][1] : undefined;
  });
}

/** Three masters with a replica each (cluster-node-timeout 3 s: a dead master is replaced in seconds). */
async function startFailoverCluster(): Promise<RedisTopology> {
  const { dir, password, passwordFile } = newDir('cluster');
  const ports = await freeClusterPorts(6);
  const nodes = ports.map((port) => new NodeProcess(port, [writeClusterNodeConfig(dir, port, password)]));
  const dispose = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const n of nodes) n.start();
    await answer(ports, password);
    await createCluster(ports, password, 1);
    await eventually(() => clusterReady(ports, password), {
      timeout: 30_000,
      interval: 200,
      what: 'the Cluster',
    });
  } catch (err) {
    await dispose();
    throw err;
  }
  const masters = async (): Promise<number[]> => {
    const roles = await Promise.all(
      ports.map((port) => onNode(port, password, async (r) => (await r.role())[0]).catch(() => 'down')),
    );
    return ports.filter((_, i) => roles[i] === 'master');
  };
  return {
    kind: 'cluster',
    env: {
      REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(','),
      REDIS_PASSWORD_FILE: passwordFile,
    },
    async failover() {
      const victimPort = (await queueMaster(ports[0] ?? 0, password)) ?? 0;
      const victim = nodes.find((n) => n.port === victimPort) as NodeProcess;
      const witness = ports.find((p) => p !== victimPort) ?? 0;
      const killedAt = Date.now();
      await victim.kill();
      await eventually(
        async () => {
          const now = await queueMaster(witness, password).catch(() => undefined);
          return now !== undefined && now !== victimPort;
        },
        { timeout: 60_000, interval: 100, what: 'a replica promoted to serve the queue' },
      );
      const promotedMs = Date.now() - killedAt;
      victim.start();
      await eventually(() => clusterReady(ports, password).catch(() => false), {
        timeout: 60_000,
        interval: 200,
        what: 'the killed master back as a replica',
      });
      return promotedMs;
    },
    async fillMemory() {
      return fill(await masters(), password);
    },
    dispose,
  };
}

/** A primary, its replica and three Sentinels (down after 2 s, quorum 2). */
async function startFailoverSentinels(): Promise<RedisTopology> {
  const { dir, password, passwordFile } = newDir('sentinel');
  const [primary, replica] = [await freePort(), await freePort()];
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const auth = [`masterauth ${password}`];
  const servers = [
    new NodeProcess(primary, [writeRedisConfig(join(dir, 'primary'), primary, password, auth)]),
    new NodeProcess(replica, [
      writeRedisConfig(join(dir, 'replica'), replica, password, [...auth, `replicaof 127.0.0.1 ${primary}`]),
    ]),
  ];
  const sentinels = sentinelPorts.map(
    (port) => new NodeProcess(port, [writeSentinelConfig(dir, port, primary, password), '--sentinel']),
  );
  const every = [...servers, ...sentinels];
  const dispose = async (): Promise<void> => {
    await Promise.all(every.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  const replicasKnown = (): Promise<boolean> =>
    onNode(sentinelPorts[0] ?? 0, password, async (r) => {
      const known = (await r.call('SENTINEL', 'REPLICAS', PRIMARY_NAME)) as string[][];
      return known.some((fields) => !fields.join(' ').includes('s_down'));
    });
  try {
    for (const n of every) n.start();
    await answer([primary, replica, ...sentinelPorts], password);
    await eventually(() => replicasKnown().catch(() => false), {
      timeout: 30_000,
      interval: 200,
      what: 'the Sentinels to know the replica',
    });
  } catch (err) {
    await dispose();
    throw err;
  }
  const named = async (): Promise<number> => (await namedPrimaries(sentinelPorts, password))[0] ?? 0;
  return {
    kind: 'sentinel',
    env: {
      REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      REDIS_SENTINEL_NAME: PRIMARY_NAME,
      REDIS_PASSWORD_FILE: passwordFile,
    },
    async failover() {
      const before = await named();
      const victim = servers.find((n) => n.port === before) as NodeProcess;
      const killedAt = Date.now();
      await victim.kill();
      await eventually(
        async () =>
          (await namedPrimaries(sentinelPorts, password).catch(() => [before])).every((p) => p !== before),
        { timeout: 60_000, interval: 100, what: 'every Sentinel to name the promoted replica' },
      );
      const promotedMs = Date.now() - killedAt;
      victim.start();
      await eventually(
        async () =>
          (await onNode(before, password, async (r) => (await r.role())[0]).catch(() => '')) === 'slave',
        { timeout: 60_000, interval: 200, what: 'the killed primary back as a replica' },
      );
      return promotedMs;
    },
    async fillMemory() {
      return fill([await named()], password);
    },
    dispose,
  };
}

export function startFailoverTopology(kind: RedisTopology['kind']): Promise<RedisTopology> {
  return kind === 'cluster' ? startFailoverCluster() : startFailoverSentinels();
}
