/**
 * The replicas of a serial test file on a Redis of each kind in turn (test/helpers/replica-redis.ts):
 * a scenario is written once and registered per kind, and one set of replicas runs at a time.
 */
import test from 'ava';
import type { RedisKind } from './redis-kind.js';
import { startReplicaRedis, type ReplicaRedis } from './replica-redis.js';
import { onKind, startReplicas, stopReplicas, type Replica } from './replicas.js';

/** A test file's replicas and the Redis they share. `more` are replicas a test started beside them. */
export interface ReplicaSet {
  readonly redis: ReplicaRedis;
  readonly replicas: readonly Replica[];
  readonly more: Replica[];
}

/**
 * The replicas of a serial test file, on a Redis of each kind in turn: `on(kind)` starts (once) a
 * Redis of that kind and `names` replicas on it with `envOf`'s environment, after stopping the set of
 * the other kind, so that one set runs at a time. Tests are written once and registered per kind
 * (`for (const kind of REDIS_KINDS) test.serial(...)`), in order, so each set starts once. The last
 * set is stopped after the file's tests.
 */
export function replicaSets(
  names: readonly string[],
  envOf: (redis: ReplicaRedis) => Record<string, string>,
): (kind: RedisKind) => Promise<ReplicaSet> {
  let current: { kind: RedisKind; set: Promise<ReplicaSet> } | undefined;
  const stop = async (): Promise<void> => {
    const set = await current?.set.catch(() => undefined);
    current = undefined;
    if (set === undefined) return;
    await stopReplicas([...set.replicas, ...set.more]);
    await set.redis.dispose();
  };
  test.after.always(stop);
  return async (kind) => {
    if (current?.kind !== kind) {
      await stop();
      const start = async (): Promise<ReplicaSet> => {
        const redis = await startReplicaRedis(kind);
        const replicas = await startReplicas(names, envOf(redis)).catch(async (err: unknown) => {
          await redis.dispose();
          throw err;
        });
        await Promise.all(replicas.map((replica) => onKind(replica, kind)));
        return { redis, replicas, more: [] };
      };
      current = { kind, set: start() };
    }
    return current.set;
  };
}
