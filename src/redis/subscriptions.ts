/**
 * Pub/sub for Redis mode: one subscriber connection (made on first use) shared by every waiter of
 * one store, one channel per watched thing (a followed log, a build followed across replicas).
 * Waiters learn that something changed (a version bump) and re-read the state from Redis: a
 * missed message (a reconnection) only means an extra read.
 */
import { ChangeCounter } from './change-counter.js';
import { isServiceError, serviceError } from '../errors/errors.js';
import type { RedisConnection, RedisClient } from './connection.js';

/** A subscription not confirmed this long: the store is unavailable (503). */
const SUBSCRIBE_TIMEOUT_MS = 3000;

export interface Subscription {
  /** Bumped on every message of the channel (and on every reconnection). */
  version(): number;
  /** Resolves once the version differs from `seen`, or `signal` aborts. */
  changeSince(seen: number, signal?: AbortSignal): Promise<void>;
  release(): void;
}

interface Channel {
  readonly changes: ChangeCounter;
  users: number;
}

/** Resolves once `channel` is subscribed on `sub`; rejects with STORE_UNAVAILABLE (lost, or after SUBSCRIBE_TIMEOUT_MS). */
async function subscribed(sub: RedisClient, channel: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      // A connection lost meanwhile (Redis restarting) rejects the command: unavailable too.
      sub.subscribe(channel).catch((err: unknown) => {
        throw isServiceError(err) ? err : serviceError('STORE_UNAVAILABLE');
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(serviceError('STORE_UNAVAILABLE')), SUBSCRIBE_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One subscriber connection per store, shared by every waiter; one channel per watched thing. */
export class SubscriptionHub {
  readonly #connection: Pick<RedisConnection, 'subscriber'>;
  /** Made on first use. */
  #subscriber: RedisClient | undefined;
  readonly #channels = new Map<string, Channel>();

  constructor(connection: Pick<RedisConnection, 'subscriber'>) {
    this.#connection = connection;
  }

  async subscribe(channel: string): Promise<Subscription> {
    const sub = this.#connect();
    let own = this.#channels.get(channel);
    if (!own) {
      own = { changes: new ChangeCounter(), users: 0 };
      this.#channels.set(channel, own);
    }
    own.users += 1;
    const entry = own;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users === 0 && this.#channels.get(channel) === entry) {
        this.#channels.delete(channel);
        void sub.unsubscribe(channel).catch(() => undefined);
      }
    };
    try {
      await subscribed(sub, channel);
    } catch (err) {
      release();
      throw err;
    }
    return {
      version: () => entry.changes.version,
      changeSince: (seen, signal) => entry.changes.changeSince(seen, signal),
      release,
    };
  }

  async close(): Promise<void> {
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #connect(): RedisClient {
    if (this.#subscriber) return this.#subscriber;
    // Subscriptions wait for the connection (bounded by SUBSCRIBE_TIMEOUT_MS) and are renewed on reconnection.
    const sub = this.#connection.subscriber('subscriptions');
    sub.on('message', (channel: string) => this.#channels.get(channel)?.changes.changed());
    // After a reconnection (messages may have been missed), every follower re-reads.
    sub.on('ready', () => {
      for (const entry of this.#channels.values()) entry.changes.changed();
    });
    this.#subscriber = sub;
    return sub;
  }
}

export function createSubscriptionHub(connection: Pick<RedisConnection, 'subscriber'>): SubscriptionHub {
  return new SubscriptionHub(connection);
}
