/**
 * Where Redis mode's store is, from the Redis options (validated by redis-options.ts): one server
 * (its URL), a Redis Cluster (nodes, password, TLS) or a primary named by Sentinels; and what of it may be shown (GET /config,
 * log lines): endpoints only, never a password. Pure.
 */
import { redisEndpoint, type RedisEndpoint } from './redis-url.js';
import type { Config } from './types.js';

interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  | { readonly kind: 'server'; readonly url: string }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly RedisNode[];
      readonly password?: string;
      readonly tls: boolean;
    }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly RedisNode[];
      /** The name the Sentinels monitor the primary under. */
      readonly name: string;
      readonly password?: string;
      readonly tls: boolean;
    };

/** What may be shown of a target. */
export type RedisView =
  | RedisEndpoint
  | { readonly nodes: readonly string[]; readonly tls: boolean }
  | { readonly sentinels: readonly string[]; readonly name: string; readonly tls: boolean };

/** `host:port` (a bracketed IPv6 host loses its brackets). */
function nodeOf(text: string): RedisNode {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(at + 1)) };
}

/** The target of the options; undefined: embedded mode (no Redis). */
export function redisTargetOf(redis: Config['redis']): RedisTarget | undefined {
  if (redis.url !== undefined) return { kind: 'server', url: redis.url };
  const password = redis.password === undefined ? {} : { password: redis.password };
  if (redis.sentinels.length > 0 && redis.sentinelName !== undefined)
    return {
      kind: 'sentinel',
      sentinels: redis.sentinels.map(nodeOf),
      name: redis.sentinelName,
      tls: redis.tls,
      ...password,
    };
  if (redis.clusterNodes.length === 0) return undefined;
  return {
    kind: 'cluster',
    nodes: redis.clusterNodes.map(nodeOf),
    tls: redis.tls,
    ...password,
  };
}

export function redisView(target: RedisTarget): RedisView {
  if (target.kind === 'server') return redisEndpoint(target.url);
  const shown = (node: RedisNode): string => `${node.host}:${node.port}`;
  if (target.kind === 'sentinel')
    return { sentinels: target.sentinels.map(shown), name: target.name, tls: target.tls };
  return { nodes: target.nodes.map((node) => `${node.host}:${node.port}`), tls: target.tls };
}
