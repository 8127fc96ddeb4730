/**
 * Pub/sub for Redis mode: one subscriber connection (made on first use) shared by every waiter of
 * one store, one channel per watched thing (a followed log, a build followed across replicas).
 * Waiters learn that something changed (a version bump) and re-read the state from Redis: a
 * missed message (a reconnection) only means an extra read.
 */
import type { Redis } from 'ioredis';
import { ChangeCounter } from '../change-counter.js';
import { storeUnavailable } from '../errors.js';
import type { RedisConnection } from './connection.js';

/** A subscription not confirmed this long: the store is unavailable (503). */
const SUBSCRIBE_TIMEOUT_MS = 3000;

export interface Subscription {
  /** Bumped on every message of the channel (and on every reconnection). */
  version(): number;
  /** Resolves once the version differs from `seen`, or `signal` aborts. */
  changeSince(seen: number, signal?: AbortSignal): Promise<void>;
  release(): void;
}

/** One subscriber connection per store, shared by every follower; one channel per followed log. */
export function createFollowerHub(connection: Pick<RedisConnection, 'duplicate'>) {
  let subscriber: Redis | undefined;
  const channels = new Map<string, { changes: ChangeCounter; users: number }>();
  const connect = (): Redis => {
    if (subscriber) return subscriber;
    // Subscriptions wait for the connection (bounded by SUBSCRIBE_TIMEOUT_MS) and are renewed on reconnection.
    const sub = connection.duplicate('subscriptions', {
      enableOfflineQueue: true,
      autoResubscribe: true,
      commandTimeout: undefined,
    });
    sub.on('message', (channel: string) => {
      const entry = channels.get(channel);
      entry?.changes.changed();
    });
    // After a reconnection (messages may have been missed), every follower re-reads.
    sub.on('ready', () => {
      for (const entry of channels.values()) entry.changes.changed();
    });
    subscriber = sub;
    return sub;
  };

  return {
    async subscribe(channel: string): Promise<Subscription> {
      const sub = connect();
      let entry = channels.get(channel);
      if (!entry) {
        entry = { changes: new ChangeCounter(), users: 0 };
        channels.set(channel, entry);
      }
      entry.users += 1;
      const own = entry;
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        own.users -= 1;
        if (own.users === 0 && channels.get(channel) === own) {
          channels.delete(channel);
          void sub.unsubscribe(channel).catch(() => undefined);
        }
      };
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          sub.subscribe(channel),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(storeUnavailable()), SUBSCRIBE_TIMEOUT_MS);
          }),
        ]);
      } catch (err) {
        release();
        throw err;
      } finally {
        clearTimeout(timer);
      }
      return {
        version: () => own.changes.version,
        changeSince: (seen, signal) => own.changes.changeSince(seen, signal),
        release,
      };
    },
    async close(): Promise<void> {
      subscriber?.disconnect();
      subscriber = undefined;
    },
  };
}
