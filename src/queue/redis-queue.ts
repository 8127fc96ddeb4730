/**
 * The queue of Redis mode: one queue for every replica, each change one Lua script
 * (redis-queue-scripts.ts: one round trip, atomic, no optimistic retries). Work arriving and a
 * quota freeing are published; a replica learns of them from its subscription, never by reading
 * the queue on a timer. Keys that are not the queue's (a build's lease, a replica's heartbeat) are
 * read outside the scripts, by `reap`, with a pipeline.
 */
import { QUEUE_CLASSES } from '../rules/build-classes.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient, RedisConnection } from '../redis/connection.js';
import { randomUUID } from 'node:crypto';
import {
  BUILD_QUEUE_CHANNEL,
  QUEUE_KEYS,
  buildAliveKey,
  queueTakeKey,
  replicaAliveKey,
} from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { laneOf, type QueueEntry, type RingLevel } from './fair-order.js';
import { AGAIN, DROP_HELD, ENDED, ENQUEUE, PLACES, REMOVE, STARTED, TAKE } from './redis-queue-scripts.js';
import type { Admission, LostRun, PlaceData, PlaceInput, QueueDepths, QueueStore, Reaped } from './types.js';

const TAKES_KEPT = 50;
/** How long a take's answer is kept for a repeat of it (a command sent again after a reconnect). */
const TAKE_ANSWER_MS = 60_000;
const [, RUNNING, COUNTS, , OWNERS, TAKES] = QUEUE_KEYS as [string, string, string, string, string, string];

const depthsOf = (counts: readonly unknown[]): QueueDepths =>
  Object.fromEntries(QUEUE_CLASSES.map((c, i) => [c, Number(counts[i] ?? 0)])) as QueueDepths;

/** PLACES' answer as PlaceData. */
function placesOf(
  ids: readonly string[],
  answer: [unknown[], unknown[][]],
): { builds: PlaceInput[]; levels: RingLevel[] } {
  const [builds, levels] = answer;
  const found: PlaceInput[] = [];
  builds.forEach((item, index) => {
    const id = ids[index];
    if (!Array.isArray(item) || id === undefined) return;
    found.push({ id, level: Number(item[0]), tenant: String(item[1]), inLine: Number(item[2]) });
  });
  return {
    builds: found,
    levels: levels.map(([waiting, ...pairs]) => {
      const ring: { tenant: string; count: number }[] = [];
      for (let i = 0; i + 1 < pairs.length; i += 2)
        ring.push({ tenant: String(pairs[i]), count: Number(pairs[i + 1]) });
      return { waiting: Number(waiting), ring };
    }),
  };
}

/**
 * Which of `keys` exist (keys that are not the queue's). Sent together, one command per key: they
 * lie in different slots of a Redis Cluster, where one pipeline may hold only one slot's keys.
 */
async function existing(client: RedisClient, keys: readonly string[]): Promise<boolean[]> {
  return Promise.all(keys.map(async (key) => (await client.exists(key)) === 1));
}

/** A running build as the queue keeps it: `tenant NUL since NUL replica NUL class NUL entry JSON`. */
interface RunningBuild extends LostRun {
  readonly sinceMs: number;
  /** Whether the entry is kept: any replica may run it again. */
  readonly again: boolean;
}

function runningOf(id: string, value: string): RunningBuild {
  const [, since, replica = '', , json = ''] = value.split('\0');
  return { id, sinceMs: Number(since ?? 0), replica, again: json !== '' };
}

/** Redis mode's store: each method one script or one read (costs: redis-queue-scripts.ts). */
class RedisQueue implements QueueStore {
  readonly #connection: Pick<RedisConnection, 'subscriber' | 'call'>;
  readonly #replica: string;
  readonly #logger: Pick<Logger, 'warn'>;
  #subscriber: RedisClient | undefined;
  readonly #listeners: (() => void)[] = [];

  constructor(
    connection: Pick<RedisConnection, 'subscriber' | 'call'>,
    replica: string,
    logger: Pick<Logger, 'warn'>,
  ) {
    this.#connection = connection;
    this.#replica = replica;
    this.#logger = logger;
  }

  admission(tenant: string): Promise<Admission> {
    return this.#call(async (client) => {
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
  }

  enqueue(entry: QueueEntry): Promise<QueueDepths> {
    return this.#enqueue(entry, '');
  }

  requeue(entry: QueueEntry): Promise<QueueDepths> {
    return this.#enqueue(entry, this.#replica);
  }

  async #enqueue(entry: QueueEntry, handedBackBy: string): Promise<QueueDepths> {
    const args = [
      entry.id,
      entry.class,
      entry.tenant,
      laneOf(entry),
      JSON.stringify(entry),
      entry.maxRunning === undefined ? '' : entry.maxRunning,
      BUILD_QUEUE_CHANNEL,
      handedBackBy,
    ];
    return depthsOf((await this.#call((client) => ENQUEUE.run(client, QUEUE_KEYS, args))) as number[]);
  }

  async take(replica: string, nowMs: number): Promise<{ entry?: QueueEntry; depths: QueueDepths }> {
    const [text, ...counts] = (await this.#call((client) =>
      TAKE.run(
        client,
        [...QUEUE_KEYS, queueTakeKey(randomUUID())],
        [replica, nowMs, TAKES_KEPT, TAKE_ANSWER_MS],
      ),
    )) as [string | null, ...number[]];
    const depths = depthsOf(counts);
    return text === null ? { depths } : { entry: JSON.parse(text) as QueueEntry, depths };
  }

  async remove(id: string): Promise<QueueDepths | undefined> {
    const counts = (await this.#call((client) => REMOVE.run(client, QUEUE_KEYS, [id]))) as number[] | null;
    return counts === null ? undefined : depthsOf(counts);
  }

  async started(id: string, tenant: string, nowMs: number, again?: QueueEntry): Promise<void> {
    const entry = again === undefined || laneOf(again) !== '*' ? '' : JSON.stringify(again);
    const args = [id, tenant, nowMs, this.#replica, again?.class ?? '', entry];
    await this.#call((client) => STARTED.run(client, QUEUE_KEYS, args));
  }

  async ended(id: string, replica = this.#replica): Promise<void> {
    await this.#ended([{ id, replica }]);
  }

  async again(replica: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const args = [BUILD_QUEUE_CHANNEL, replica, ...ids];
    return (await this.#call((client) => AGAIN.run(client, QUEUE_KEYS, args))) as string[];
  }

  async places(ids: readonly string[]): Promise<PlaceData> {
    if (ids.length === 0) return { builds: [], levels: [] };
    const answer = await this.#call((client) => PLACES.run(client, QUEUE_KEYS, ids));
    return placesOf(ids, answer as [unknown[], unknown[][]]);
  }

  takeTimes(): Promise<number[]> {
    return this.#call(async (client) => (await client.lrange(TAKES, 0, -1)).map(Number));
  }

  async dropHeld(owner: string): Promise<QueueEntry[]> {
    const dropped = (await this.#call((client) => DROP_HELD.run(client, QUEUE_KEYS, [owner]))) as string[];
    return dropped.map((text) => JSON.parse(text) as QueueEntry);
  }

  /**
   * O(replicas holding builds + running builds): two reads, a pipeline of EXISTS (leases, then
   * the heartbeats of their replicas), a script for the builds no longer counted, a script per
   * stopped replica holding builds.
   */
  async reap(nowMs: number, graceMs: number): Promise<Reaped> {
    const { owners, lost } = await this.#call(async (client) => {
      const held = Object.keys(await client.hgetall(OWNERS)).filter((owner) => owner !== this.#replica);
      const alive = await existing(client, held.map(replicaAliveKey));
      const stopped = await this.#reapRunning(client, nowMs, graceMs);
      return { owners: held.filter((_, i) => alive[i] !== true), lost: stopped };
    });
    const dropped: QueueEntry[] = [];
    for (const owner of owners) dropped.push(...(await this.dropHeld(owner)));
    return { dropped, lost };
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
    if (this.#subscriber !== undefined) return;
    const sub = this.#connection.subscriber('queue-subscriber');
    this.#subscriber = sub;
    const wake = (): void => {
      for (const each of this.#listeners) each();
    };
    sub.on('message', wake);
    // Subscribed once connected (ioredis subscribes again on every reconnection; a connection lost
    // before the first answer: on the next); a message missed while disconnected means one more
    // look once connected again.
    let subscribed = false;
    const subscribe = (): void => {
      if (subscribed) return;
      sub.subscribe(BUILD_QUEUE_CHANNEL).then(
        () => {
          subscribed = true;
          wake();
        },
        (err: unknown) => this.#logger.warn({ err }, 'the queue channel could not be subscribed'),
      );
    };
    sub.on('ready', subscribe);
    sub.on('ready', wake);
  }

  /**
   * O(1): the heartbeat's expiry pushed back (a command Redis at maxmemory still runs), or set when
   * it ran out.
   */
  heartbeat(): Promise<void> {
    return this.#call(async (client) => {
      const key = replicaAliveKey(this.#replica);
      if ((await client.pexpire(key, LEASE_MS)) === 0) await client.set(key, '1', 'PX', LEASE_MS);
    });
  }

  close(): void {
    this.#subscriber?.disconnect();
  }

  #call<T>(run: (client: RedisClient) => Promise<T>): Promise<T> {
    return this.#connection.call(run);
  }

  async #ended(runs: readonly LostRun[]): Promise<void> {
    const args = runs.flatMap(({ id, replica }) => [id, replica]);
    await this.#call((client) => ENDED.run(client, QUEUE_KEYS, [BUILD_QUEUE_CHANNEL, ...args]));
  }

  /**
   * The running builds past their grace whose lease expired: those any replica may run again are
   * answered (with whether their replica beats: this one does), the others no longer counted once
   * their replica stopped beating.
   */
  async #reapRunning(client: RedisClient, nowMs: number, graceMs: number): Promise<LostRun[]> {
    const running = Object.entries(await client.hgetall(RUNNING))
      .map(([id, value]) => runningOf(id, value))
      .filter((run) => nowMs - run.sinceMs >= graceMs);
    const leased = await existing(
      client,
      running.map(({ id }) => buildAliveKey(id)),
    );
    const gone = running.filter((_, i) => leased[i] !== true);
    const replicas = [...new Set(gone.map((run) => run.replica).filter((name) => name !== ''))];
    const beats = await existing(client, replicas.map(replicaAliveKey));
    const beating = new Set(replicas.filter((_, i) => beats[i] === true));
    const forgotten = gone.filter((run) => !run.again && !beating.has(run.replica));
    if (forgotten.length > 0) await this.#ended(forgotten);
    return gone
      .filter((run) => run.again)
      .map(({ id, replica }) => ({ id, replica, beating: beating.has(replica) }));
  }
}

export function createRedisQueue(
  connection: Pick<RedisConnection, 'subscriber' | 'call'>,
  replica: string,
  logger: Pick<Logger, 'warn'>,
): QueueStore {
  return new RedisQueue(connection, replica, logger);
}
