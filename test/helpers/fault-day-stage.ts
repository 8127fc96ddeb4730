/**
 * The stage of a day of faults (test/helpers/fault-day.ts): a Redis of its own (append-only, so a
 * restart keeps its data), two builders behind private bridges, a registry front the day controls,
 * a webhook receiver and three replicas on them. What it starts is let go by `releaseStage`.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { privateBuilderBridge, type PrivateBridge } from '../stack/builders.js';
import { stack } from './build-support.js';
import { newSecret, startReceiver, type EventReceiver } from './event-receiver.js';
import { startRedis, type RedisProcess } from './redis-process.js';
import { registryFront, type RegistryFront } from './registry-front.js';
import { replicaEnv, startReplicas, stopReplicas, type Replica } from './replicas.js';
import type { DayOptions } from './fault-day-types.js';

/** What the day holds from its start: filled as the parts start, emptied by `releaseStage`. */
export interface Scene {
  readonly dir: string;
  readonly cleanup: (() => Promise<void> | void)[];
  /** The replicas now (the killed one replaced in place). */
  readonly replicas: Replica[];
  /** The replicas stopped on the way (their logs are written at the end too). */
  readonly everyReplica: Replica[];
}

export interface Stage extends Scene {
  readonly redis: RedisProcess;
  /** A connection of the day's own to look at the builds' liveness keys. */
  readonly store: Redis;
  readonly receiver: EventReceiver;
  readonly front: RegistryFront;
  readonly bridges: readonly PrivateBridge[];
  /** What each replica is told (a restarted one too). */
  readonly env: Record<string, string>;
}

/** A scene of its own in `dir` (removed at the end). */
export const newScene = (dir: string): Scene => ({
  dir,
  cleanup: [() => rmSync(dir, { recursive: true, force: true })],
  replicas: [],
  everyReplica: [],
});

/** Starts every part of the stage, each let go with the scene. */
export async function setStage(options: DayOptions, scene: Scene): Promise<Stage> {
  const { cleanup } = scene;
  const redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
  cleanup.push(() => redis.dispose());
  const store = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  store.on('error', () => undefined);
  cleanup.push(() => store.disconnect());
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  cleanup.push(() => receiver.close());
  const front = await registryFront(stack.REGISTRY_ANON);
  cleanup.push(() => front.close());
  const bridges: PrivateBridge[] = [await privateBuilderBridge('a'), await privateBuilderBridge('b')];
  for (const b of bridges) cleanup.push(() => b.stop());
  const subscriptions = join(scene.dir, 'subscriptions.json');
  writeFileSync(
    subscriptions,
    JSON.stringify([
      { name: 'day', url: receiver.url, secrets: [secret], types: ['dev.cdevents.build.finished'] },
    ]),
  );
  const env = replicaEnv(stack, redis.url, {
    BUILDER_ENDPOINT: bridges.map((b) => b.endpoint).join(','),
    INSECURE_REGISTRIES: [stack.REGISTRY_ANON, front.host].join(','),
    MAX_CONCURRENT_BUILDS: '2',
    BUILD_TIMEOUT_SECONDS: String(options.buildTimeoutSeconds),
    BUILD_HISTORY: '2000',
    EVENT_SUBSCRIPTIONS_CONFIG_PATH: subscriptions,
    EVENT_RETRY_SECONDS: Array.from({ length: 60 }, () => '2').join(','),
  });
  scene.replicas.push(...(await startReplicas(['A', 'B', 'C'], env)));
  return { ...scene, redis, store, receiver, front, bridges, env };
}

/**
 * Writes each replica's output to IBS_FAULT_DAY_LOGS (when set), stops the replicas, then lets go
 * of the rest, last started first.
 */
export async function releaseStage(scene: Scene): Promise<void> {
  const logDir = process.env.IBS_FAULT_DAY_LOGS;
  if (logDir !== undefined) {
    for (const [i, r] of [...scene.everyReplica, ...scene.replicas].entries())
      writeFileSync(join(logDir, `${r.name}-${i}.log`), r.service.stdout() + r.service.stderr());
  }
  await stopReplicas(scene.replicas);
  for (const step of scene.cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
}
