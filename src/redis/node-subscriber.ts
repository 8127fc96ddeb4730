/**
 * The subscriber connection to a Redis Cluster: a plain connection to one node (a PUBLISH in a
 * Cluster reaches the subscribers of every node), moving to the next configured node on every
 * reconnection and backing off like the other connections. ioredis' own Cluster subscriber picks
 * another node at once on every close: with the whole Cluster down it retried thousands of times
 * a second.
 */
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { createConnection } from 'node:net';
import { AbstractConnector, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config/redis-target.js';

type ClusterNodes = Extract<RedisTarget, { kind: 'cluster' }>['nodes'];
type NetStream = Awaited<ReturnType<AbstractConnector['connect']>>;

/** ioredis' message for a connection closed on purpose (a connect that must not go on). */
const CLOSED = 'Connection is closed.';
const DISCONNECT_TIMEOUT_MS = 2000;

/**
 * A connector to `nodes` in turn: a random one first (the replicas' subscribers spread over the
 * nodes), the next one on each later connect (the last connection failed or was lost). O(1).
 */
function nodeConnector(nodes: ClusterNodes): new (options: unknown) => AbstractConnector {
  let turn = Math.floor(Math.random() * nodes.length);
  let first = true;
  return class NodeConnector extends AbstractConnector {
    readonly #tls: ConnectionOptions | undefined;

    /** `options`: the client's own (ioredis hands every connector those). */
    constructor(options: unknown) {
      const { disconnectTimeout, tls } = options as RedisOptions;
      super(disconnectTimeout ?? DISCONNECT_TIMEOUT_MS);
      this.#tls = tls;
    }

    connect(): Promise<NetStream> {
      if (!first) turn = (turn + 1) % nodes.length;
      first = false;
      const { host, port } = nodes[turn]!;
      this.connecting = true;
      return new Promise((resolve, reject) => {
        // As ioredis' own connector: the stream is made on the next tick, unless disconnected meanwhile.
        process.nextTick(() => {
          if (!this.connecting) return reject(new Error(CLOSED));
          try {
            const tls = this.#tls;
            this.stream = tls ? tlsConnect({ ...tls, host, port }) : createConnection({ host, port });
          } catch (err) {
            return reject(err as Error);
          }
          this.stream.once('error', (err: Error) => {
            this.firstError = err;
          });
          resolve(this.stream);
        });
      });
    }
  };
}

/**
 * A subscriber to the Cluster of `nodes`: `options` (password, TLS, reconnect backoff, resubscribe)
 * apply to each node in turn; channels subscribed are subscribed again on every reconnection.
 */
export function clusterSubscriber(nodes: ClusterNodes, options: RedisOptions): Redis {
  return new Redis({ ...options, Connector: nodeConnector(nodes) });
}
