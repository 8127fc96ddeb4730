/**
 * The queue of Redis mode: one queue for every replica, each change one Lua script
 * (redis-queue-scripts.ts: one round trip, atomic, no optimistic retries). Work arriving and a
 * quota freeing are published; a replica learns of them from its subscription, never by reading
 * the queue on a timer. Keys that are not the queue's (a build's lease, a replica's heartbeat) are
 * read outside the scripts, by `reap`, with a pipeline.
 */
import type { Redis } from 'ioredis';
import { QUEUE_CLASSES } from '../rules/build-classes.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_QUEUE_CHANNEL, QUEUE_KEYS, buildAliveKey, replicaAliveKey } from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { laneOf, type QueueEntry, type RingLevel } from './fair-order.js';
import { DROP_HELD, ENDED, ENQUEUE, PLACES, REMOVE, STARTED, TAKE } from './redis-queue-scripts.js';
import type { PlaceInput, QueueDepths, QueueStore } from './types.js';

const TAKES_KEPT = 50;
const [, RUNNING, COUNTS, , OWNERS, TAKES] = QUEUE_KEYS as [string, string, string, string, string, string];

const depthsOf = (counts: readonly unknown[]): QueueDepths =>
  Object.fromEntries(QUEUE_CLASSES.map((c, i) => [c, Number(counts[i] ?? 0)])) as QueueDepths;

/** PLACES' answer as PlaceData. */
function placesOf(ids: readonly string[], answer: [unknown[], unknown[][]]): { builds: PlaceInput[]; levels: RingLevel[] } {
  const [builds, levels] = answer;
  const found: PlaceInput[] = [];
  builds.forEach((item, i) => {
    const id = ids[i];
    if (!Array.isArray(item) || id === undefined) return;
    found.push({ id, level: Number(item[0]), tenant: String(item[1]), inLine: Number(item[2]) });
  });
  return {
    builds: found,
    levels: levels.map(([waiting, ...pairs]) => {
      const ring: { tenant: string; count: number }[] = [];
      for (let i = 0; i + 1 < pairs.length; i += 2) ring.push({ tenant: String(pairs[i]), count: Number(pairs[i + 1]) });
      return { waiting: Number(waiting), ring };
    }),
  };
}

/** Which of `keys` exist, read with one pipeline (keys that are not the queue's). */
async function existing(client: Redis, keys: readonly string[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const pipeline = client.pipeline();
  for (const key of keys) pipeline.exists(key);
  return ((await pipeline.exec()) ?? []).map(([, n]) => n === 1);
}

export function createRedisQueue(
  connection: Pick<RedisConnection, 'duplicate' | 'call'>,
  replica: string,
  logger: Pick<Logger, 'warn'>,
): QueueStore {
  let subscriber: Redis | undefined;
  const listeners: (() => void)[] = [];
  const script = <T>(run: (client: Redis) => Promise<unknown>): Promise<T> =>
    connection.call(run) as Promise<T>;
  const ended = (ids: readonly string[]): Promise<unknown> =>
    script((client) => ENDED.run(client, QUEUE_KEYS, [BUILD_QUEUE_CHANNEL, ...ids]));
  const dropHeld = async (owner: string): Promise<QueueEntry[]> => {
    const dropped: string[] = await script((client) => DROP_HELD.run(client, QUEUE_KEYS, [owner]));
    return dropped.map((text) => JSON.parse(text) as QueueEntry);
  };

  /** The running builds whose lease expired, past their grace: no longer counted. */
  const reapRunning = async (client: Redis, nowMs: number, graceMs: number): Promise<void> => {
    const running = Object.entries(await client.hgetall(RUNNING)).filter(
      ([, value]) => nowMs - Number(value.split('\0')[1] ?? 0) >= graceMs,
    );
    const alive = await existing(client, running.map(([id]) => buildAliveKey(id)));
    const gone = running.filter((_, i) => alive[i] !== true).map(([id]) => id);
    if (gone.length > 0) await ended(gone);
  };

  return {
    async admission(tenant) {
      return script(async (client) => {
        const counts = await client.hmget(
          COUNTS,
          ...QUEUE_CLASSES.map((c) => `class:${c}`),
          `tenant:${tenant}`,
          `running:${tenant}`,
        );
        return {
          depths: depthsOf(counts),
          tenantWaiting: Number(counts[QUEUE_CLASSES.length] ?? 0),
          tenantRunning: Number(counts[QUEUE_CLASSES.length + 1] ?? 0),
        };
      });
    },
    async enqueue(entry) {
      const counts = await script<number[]>((client) =>
        ENQUEUE.run(client, QUEUE_KEYS, [
          entry.id,
          entry.class,
          entry.tenant,
          laneOf(entry),
          JSON.stringify(entry),
          entry.maxRunning === undefined ? '' : entry.maxRunning,
          BUILD_QUEUE_CHANNEL,
        ]),
      );
      return depthsOf(counts);
    },
    async take(me, nowMs) {
      const [text, ...counts] = await script<[string | null, ...number[]]>((client) =>
        TAKE.run(client, QUEUE_KEYS, [me, nowMs, TAKES_KEPT]),
      );
      const depths = depthsOf(counts);
      return text === null ? { depths } : { entry: JSON.parse(text) as QueueEntry, depths };
    },
    async remove(id) {
      const counts = await script<number[] | null>((client) => REMOVE.run(client, QUEUE_KEYS, [id]));
      return counts === null ? undefined : depthsOf(counts);
    },
    async started(id, tenant, nowMs) {
      await script((client) => STARTED.run(client, QUEUE_KEYS, [id, tenant, nowMs]));
    },
    async ended(id) {
      await ended([id]);
    },
    async places(ids) {
      if (ids.length === 0) return { builds: [], levels: [] };
      const answer = await script<[unknown[], unknown[][]]>((client) => PLACES.run(client, QUEUE_KEYS, ids));
      return placesOf(ids, answer);
    },
    takeTimes: () =>
      script(async (client) => (await client.lrange(TAKES, 0, -1)).map(Number)),
    dropHeld,
    async reap(nowMs, graceMs) {
      const owners: string[] = await script(async (client) => {
        const held = Object.keys(await client.hgetall(OWNERS)).filter((owner) => owner !== replica);
        const alive = await existing(client, held.map(replicaAliveKey));
        await reapRunning(client, nowMs, graceMs);
        return held.filter((_, i) => alive[i] !== true);
      });
      const dropped: QueueEntry[] = [];
      for (const owner of owners) dropped.push(...(await dropHeld(owner)));
      return dropped;
    },
    onChange(listener) {
      listeners.push(listener);
      if (subscriber !== undefined) return;
      subscriber = connection.duplicate('queue-subscriber');
      const wake = (): void => {
        for (const each of listeners) each();
      };
      subscriber.on('message', wake);
      // A message missed while disconnected: look again once subscribed anew.
      subscriber.on('ready', wake);
      subscriber.subscribe(BUILD_QUEUE_CHANNEL).catch((err: unknown) => {
        logger.warn({ err }, 'the queue channel could not be subscribed');
      });
    },
    heartbeat: () =>
      script(async (client) => {
        await client.set(replicaAliveKey(replica), '1', 'PX', LEASE_MS);
      }),
    close() {
      subscriber?.disconnect();
    },
  };
}

