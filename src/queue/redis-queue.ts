/**
 * The queue of Redis mode: one document every replica reads and changes with an optimistic
 * transaction (WATCH, then MULTI/EXEC, again when another replica changed it first), on a
 * connection of its own, one change at a time per replica. A change is published so that idle
 * replicas take the next build at once. Running builds are alive while their record's lease is;
 * replicas while their heartbeat is.
 */
import { isServiceError, serviceError } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection, RedisClient } from '../redis/connection.js';
import { BUILD_QUEUE, BUILD_QUEUE_CHANNEL, buildAliveKey, replicaAliveKey } from '../redis/keys.js';
import { LEASE_MS } from '../redis/lease.js';
import { EMPTY_QUEUE, type QueueState } from './fair-order.js';
import type { Liveness, QueueStore } from './types.js';

const MAX_TRIES = 50;

/**
 * A failed command (Redis restarting, the connection lost) is STORE_UNAVAILABLE (503), as in
 * src/redis/connection.ts: never an internal error.
 */
async function storeCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw isServiceError(err) ? err : serviceError('STORE_UNAVAILABLE');
  }
}

const parse = (text: string | null): QueueState =>
  text === null
    ? EMPTY_QUEUE
    : ({ ...EMPTY_QUEUE, ...(JSON.parse(text) as Partial<QueueState>) } as QueueState);

async function liveness(client: RedisClient, state: QueueState): Promise<Liveness> {
  const builds = state.running.map((r) => r.id);
  const replicas = [...new Set(state.waiting.map((w) => w.owner))];
  const keys = [...builds.map(buildAliveKey), ...replicas.map(replicaAliveKey)];
  const pipeline = client.pipeline();
  for (const key of keys) pipeline.exists(key);
  const found = keys.length === 0 ? [] : ((await pipeline.exec()) ?? []).map(([, n]) => n === 1);
  return {
    builds: new Set(builds.filter((_, i) => found[i] === true)),
    replicas: new Set(replicas.filter((_, i) => found[builds.length + i] === true)),
  };
}

export function createRedisQueue(
  connection: Pick<RedisConnection, 'duplicate' | 'call'>,
  replica: string,
  logger: Pick<Logger, 'warn'>,
): QueueStore {
  const client = connection.duplicate('queue');
  let subscriber: RedisClient | undefined;
  const listeners: (() => void)[] = [];
  let chain: Promise<unknown> = Promise.resolve();

  const transact = async <T>(
    change: (state: QueueState, alive: Liveness) => { state: QueueState; value: T },
  ): Promise<T> => {
    for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
      await client.watch(BUILD_QUEUE);
      const state = parse(await client.get(BUILD_QUEUE));
      const next = change(state, await liveness(client, state));
      const done = await client.multi().set(BUILD_QUEUE, JSON.stringify(next.state)).exec();
      if (done !== null) return next.value;
    }
    throw serviceError('STORE_UNAVAILABLE');
  };

  return {
    update(change) {
      const run = chain.then(() => storeCall(() => transact(change)));
      chain = run.catch(() => undefined);
      return run;
    },
    read: () => storeCall(async () => parse(await client.get(BUILD_QUEUE))),
    onChange(listener) {
      listeners.push(listener);
      if (subscriber !== undefined) return;
      subscriber = connection.duplicate('queue-subscriber');
      subscriber.on('message', () => {
        for (const each of listeners) each();
      });
      subscriber.subscribe(BUILD_QUEUE_CHANNEL).catch((err: unknown) => {
        logger.warn({ err }, 'the queue channel could not be subscribed');
      });
    },
    changed: () =>
      storeCall(async () => {
        await client.publish(BUILD_QUEUE_CHANNEL, replica);
      }),
    heartbeat: () =>
      storeCall(async () => {
        await client.set(replicaAliveKey(replica), '1', 'PX', LEASE_MS);
      }),
    close() {
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}
