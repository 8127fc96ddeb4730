/**
 * The Redis that a replica test's service processes share, of either kind (docs/redis.md): one
 * redis-server of the test's own, or a three-master Redis Cluster of its own. The replica tests
 * write each scenario once and run it on both kinds, with the same assertions; this gives each
 * what a replica is told, and a connection of the test's own to look at what is stored.
 */
import type { RedisConnection } from '../../src/redis/connection.js';
import { dumpRedis } from './redis-dump.js';
import { startRedisCluster } from './redis-cluster-process.js';
import { startRedis } from './redis-process.js';
import { readyConnection, type RedisKind } from './redis-kind.js';

export interface ReplicaRedis {
  readonly kind: RedisKind;
  /** The password (a canary: the tests check it is shown nowhere). */
  readonly password: string;
  /** What a replica is told: REDIS_URL, or REDIS_CLUSTER_NODES and REDIS_PASSWORD_FILE. */
  readonly env: Readonly<Record<string, string>>;
  /** A ready connection of the test's own (closed with the Redis). */
  connection(): Promise<RedisConnection>;
  /** Every key and value it holds, as text (every master of a cluster): for canary checks. */
  dump(): Promise<string>;
  /**
   * An outage: kills the server, or every node of the cluster, at once; resolves once all have
   * exited. `start()` brings it back on the same ports (a cluster: the same cluster, formed again
   * from each node's nodes.conf), without its data; resolves once it answers (a cluster: ready).
   */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good (and its connection) and removes its files. */
  dispose(): Promise<void>;
}

/** Starts a Redis of `kind` of the test's own; resolves once it answers (a cluster: once ready). */
export async function startReplicaRedis(kind: RedisKind): Promise<ReplicaRedis> {
  const server = kind === 'server' ? await startRedis() : await startRedisCluster();
  let connection: Promise<RedisConnection> | undefined;
  const env: Record<string, string> =
    'url' in server
      ? { REDIS_URL: server.url }
      : { REDIS_CLUSTER_NODES: server.nodes.join(','), REDIS_PASSWORD_FILE: server.passwordFile };
  return {
    kind,
    password: server.password,
    env,
    connection: () => (connection ??= readyConnection(server)),
    dump: () =>
      'url' in server
        ? dumpRedis(server.url)
        : dumpRedis(masterUrls(server.nodes.slice(0, 3), server.password)),
    stop: () => server.stop(),
    start: () => server.start(),
    async dispose() {
      await (await connection?.catch(() => undefined))?.close();
      await server.dispose();
    },
  };
}

/** `redis://` URLs of the cluster's masters, for a plain client per node (KEYS sees one node). */
function masterUrls(nodes: readonly string[], password: string): string[] {
  return nodes.map((node) => `redis://:${encodeURIComponent(password)}@${node}`);
}
