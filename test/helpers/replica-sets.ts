/**
 * The replicas of a replica test on a Redis of its own of either kind (test/helpers/replica-redis.ts):
 * one test's own set, or a serial file's set of each kind in turn (a scenario is written once and
 * registered per kind, one set runs at a time), or a file's set on a Redis it starts itself; and the
 * scratch of a file whose replicas run each other's queued builds. Each is let go after its test or file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { StackEnv } from '../stack/env.js';
import { ownDockerfileRepo } from './build-support.js';
import type { RedisKind } from './redis-kind.js';
import { startReplicaRedis, type ReplicaRedis } from './replica-redis.js';
import { onKind, serverGitCredentials, startReplicas, stopReplicas, type Replica } from './replicas.js';

/** A test file's replicas and the Redis they share. `more` are replicas a test started beside them. */
export interface ReplicaSet {
  readonly redis: ReplicaRedis;
  readonly replicas: readonly Replica[];
  readonly more: Replica[];
}

/** Starts a Redis of `kind` and `names` replicas on it with `envOf`'s environment, each checked on that kind. */
async function startSet(
  kind: RedisKind,
  names: readonly string[],
  envOf: (redis: ReplicaRedis) => Record<string, string>,
): Promise<ReplicaSet> {
  const redis = await startReplicaRedis(kind);
  const replicas = await startReplicas(names, envOf(redis)).catch(async (err: unknown) => {
    await redis.dispose();
    throw err;
  });
  const set: ReplicaSet = { redis, replicas, more: [] };
  await Promise.all(replicas.map((replica) => onKind(replica, kind))).catch(async (err: unknown) => {
    await stopSet(set);
    throw err;
  });
  return set;
}

async function stopSet(set: ReplicaSet): Promise<void> {
  await stopReplicas([...set.replicas, ...set.more]);
  await set.redis.dispose();
}

/**
 * One test's own replicas: `names` on a Redis of `kind` of its own with `envOf`'s environment,
 * stopped with the Redis (and the replicas the test adds to `more`) when the test ends.
 */
export async function ownReplicas(
  t: { teardown: (fn: () => Promise<void>) => void },
  kind: RedisKind,
  names: readonly string[],
  envOf: (redis: ReplicaRedis) => Record<string, string>,
): Promise<ReplicaSet> {
  const set = await startSet(kind, names, envOf);
  t.teardown(() => stopSet(set));
  return set;
}

/**
 * A test file's replicas on a Redis it starts with `startRedis` (a redis-server with options, a
 * cluster): `names` with `envOf`'s environment, started before the file's tests (after the hooks
 * registered before this call) and stopped after them, then the Redis. The getter is valid in tests.
 */
export function fileReplicas<R extends { dispose(): Promise<void> }>(
  startRedis: () => Promise<R>,
  names: readonly string[],
  envOf: (redis: R) => Record<string, string>,
): () => { readonly redis: R; readonly replicas: readonly Replica[] } {
  let redis: R | undefined;
  let replicas: Replica[] = [];
  test.before(async () => {
    redis = await startRedis();
    replicas = await startReplicas(names, envOf(redis));
  });
  test.after.always(async () => {
    await stopReplicas(replicas);
    await redis?.dispose();
  });
  return () => {
    if (redis === undefined) throw new Error('the replicas of this test file have not started');
    return { redis, replicas };
  };
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
    if (set !== undefined) await stopSet(set);
  };
  test.after.always(stop);
  return async (kind) => {
    if (current?.kind !== kind) {
      await stop();
      current = { kind, set: startSet(kind, names, envOf) };
    }
    return current.set;
  };
}

/** The scratch of a replica test file: see `queueFile`. */
export interface QueueFile {
  /** A folder of the file's own. */
  readonly dir: string;
  /** The stack's git credentials as server entries, for GIT_CREDENTIALS_CONFIG_PATH. */
  readonly credentials: string;
  /** Serves a repository of the file's own with `dockerfile` (ownDockerfileRepo); its URL. */
  repository(dockerfile: string): string;
}

/**
 * The scratch of a test file whose replicas run each other's queued builds: requests carry no
 * credentials of their own, the replicas have the stack's as server entries. The folder and the
 * repositories are removed after the file's tests.
 */
export function queueFile(stack: StackEnv, label: string): QueueFile {
  const dir = mkdtempSync(join(tmpdir(), `ibs-${label}-`));
  const removals: (() => void)[] = [];
  test.after.always(() => {
    for (const remove of removals) remove();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    credentials: serverGitCredentials(stack, dir),
    repository: (dockerfile) => {
      const repo = ownDockerfileRepo(dockerfile);
      removals.push(repo.remove);
      return repo.repository;
    },
  };
}
