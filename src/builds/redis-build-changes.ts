/**
 * The change feed of Redis mode: every record's change is published by the script that makes it
 * (`{"id","repository"}`, never more); one subscriber connection per replica, made on first use,
 * hands each to this replica's listeners (the open feeds of GET /builds/events). After a
 * reconnection (messages may have been missed) the listeners are told with an empty id: read again.
 */
import type { RedisClient, RedisConnection } from '../redis/connection.js';
import { BUILD_CHANGES_CHANNEL } from '../redis/keys.js';
import { serviceError } from '../errors/errors.js';
import type { BuildChange } from './types.js';

/** The change that says "anything may have changed": a page reads its first page again. */
const RESET_CHANGE: BuildChange = { id: '', repository: '' };

export class ChangeFeed {
  readonly #connection: Pick<RedisConnection, 'subscriber'>;
  readonly #listeners = new Set<(change: BuildChange) => void>();
  #subscriber: RedisClient | undefined;
  /** Settles once the channel is subscribed (the first watch waits for it). */
  #subscribed: Promise<unknown> | undefined;

  constructor(connection: Pick<RedisConnection, 'subscriber'>) {
    this.#connection = connection;
  }

  #tell(change: BuildChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  #connect(): RedisClient {
    if (this.#subscriber !== undefined) return this.#subscriber;
    const sub = this.#connection.subscriber('build changes');
    sub.on('message', (_channel: string, message: string) => {
      try {
        const { id, repository } = JSON.parse(message) as Partial<BuildChange>;
        if (typeof id === 'string' && typeof repository === 'string') this.#tell({ id, repository });
      } catch {
        // not a change of this service: ignored
      }
    });
    let ready = false;
    sub.on('ready', () => {
      if (ready) this.#tell(RESET_CHANGE);
      ready = true;
    });
    this.#subscribed = sub.subscribe(BUILD_CHANGES_CHANNEL);
    this.#subscribed.catch(() => undefined);
    this.#subscriber = sub;
    return sub;
  }

  /** Calls `listener` on each change from now on (the channel subscribed); answers the stop. */
  async watch(listener: (change: BuildChange) => void): Promise<() => void> {
    this.#connect();
    try {
      await this.#subscribed;
    } catch {
      // The connection was lost while subscribing: it subscribes again once it is back.
      this.#subscribed = undefined;
      this.close();
      throw serviceError('STORE_UNAVAILABLE');
    }
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  close(): void {
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }
}
