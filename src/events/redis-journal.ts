/**
 * Redis mode's journal (docs/redis.md): per subscription a stream read by one consumer group.
 * One replica at a time delivers a subscription (its lease, renewed while it lives), so events
 * go out in order; a replica that takes a lease over claims the dead one's pending entry
 * (XAUTOCLAIM) first. An entry done with is acknowledged and deleted: the stream's length is
 * what is pending. Deliveries are a hash indexed by record time.
 */
import type { RedisConnection, RedisClient } from '../redis/connection.js';
import {
  DELIVERY_GROUP,
  EVENT_DELIVERIES,
  EVENT_DELIVERIES_INDEX,
  eventDisabledKey,
  eventOwnerKey,
  eventStreamKey,
} from '../redis/keys.js';
import { deliveryKey, matching, RECENT_DELIVERIES } from './recent-deliveries.js';
import type { CloudEvent, Delivery, DeliveryFilter, EventJournal, JournalEntry } from './types.js';
import { LEASE_MS, releaseLease, takeLease, type LeaseHold } from '../redis/lease.js';

type StreamEntry = [string, string[]];

function entryOf(raw: StreamEntry | undefined): JournalEntry | undefined {
  if (raw === undefined) return undefined;
  const [position, fields] = raw;
  const at = fields.indexOf('event');
  const text = at < 0 ? undefined : fields[at + 1];
  return text === undefined ? undefined : { position, event: JSON.parse(text) as CloudEvent };
}

export class RedisJournal implements EventJournal {
  readonly #redis: RedisClient;
  readonly #consumer: string;
  readonly #subscriptions: readonly string[];
  /** Subscriptions whose lease this replica took: the previous owner's pending entry is claimed first. */
  readonly #takenOver = new Set<string>();
  readonly #grouped = new Set<string>();
  #records = 0;

  private constructor(connection: RedisConnection, consumer: string, subscriptions: readonly string[]) {
    this.#redis = connection.client;
    this.#consumer = consumer;
    this.#subscriptions = subscriptions;
  }

  /** The groups are made by each loop's first step (Redis may not answer yet at start-up). */
  static open(connection: RedisConnection, consumer: string, subscriptions: readonly string[]): RedisJournal {
    return new RedisJournal(connection, consumer, subscriptions);
  }

  /** The lease of the replica delivering `subscription`, held under this consumer's name. */
  #ownerLease(subscription: string): LeaseHold {
    return { key: eventOwnerKey(subscription), token: this.#consumer };
  }

  async #ensureGroup(subscription: string): Promise<void> {
    if (this.#grouped.has(subscription)) return;
    await this.#redis
      .xgroup('CREATE', eventStreamKey(subscription), DELIVERY_GROUP, '0', 'MKSTREAM')
      .catch((err: unknown) => {
        if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
      });
    this.#grouped.add(subscription);
  }

  async record(event: CloudEvent, deliveries: readonly Delivery[]): Promise<void> {
    const multi = this.#redis.multi();
    const score = Date.parse(event.time);
    for (const delivery of deliveries) {
      multi.xadd(eventStreamKey(delivery.subscription), '*', 'event', JSON.stringify(event));
      const key = deliveryKey(delivery.subscription, delivery.id);
      multi.hset(EVENT_DELIVERIES, key, JSON.stringify(delivery));
      multi.zadd(EVENT_DELIVERIES_INDEX, score, key);
    }
    await multi.exec();
    this.#records += 1;
    if (this.#records % 100 === 0) await this.#trim();
  }

  /** Drops the oldest deliveries beyond the newest RECENT_DELIVERIES. */
  async #trim(): Promise<void> {
    const old = await this.#redis.zrange(EVENT_DELIVERIES_INDEX, 0, String(-(RECENT_DELIVERIES + 1)));
    if (old.length === 0) return;
    await this.#redis
      .multi()
      .hdel(EVENT_DELIVERIES, ...old)
      .zrem(EVENT_DELIVERIES_INDEX, ...old)
      .exec();
  }

  async own(subscription: string): Promise<boolean> {
    await this.#ensureGroup(subscription);
    const taken = await takeLease(this.#redis, this.#ownerLease(subscription), LEASE_MS);
    if (taken.kind === 'taken') this.#takenOver.add(subscription);
    return taken.kind !== 'held';
  }

  async head(subscription: string): Promise<JournalEntry | undefined> {
    const key = eventStreamKey(subscription);
    if (this.#takenOver.delete(subscription)) {
      // Every pending entry of the group becomes this replica's, in the stream's order.
      await this.#redis.xautoclaim(key, DELIVERY_GROUP, this.#consumer, 0, '0-0', 'COUNT', 100);
    }
    for (const from of ['0', '>']) {
      const read = (await this.#redis.xreadgroup(
        'GROUP',
        DELIVERY_GROUP,
        this.#consumer,
        'COUNT',
        1,
        'STREAMS',
        key,
        from,
      )) as [string, StreamEntry[]][] | null;
      const entry = entryOf(read?.[0]?.[1][0]);
      if (entry !== undefined) return entry;
    }
    return undefined;
  }

  async done(subscription: string, entry: JournalEntry): Promise<void> {
    const key = eventStreamKey(subscription);
    await this.#redis.multi().xack(key, DELIVERY_GROUP, entry.position).xdel(key, entry.position).exec();
  }

  pending(subscription: string): Promise<number> {
    return this.#redis.xlen(eventStreamKey(subscription));
  }

  async saveDelivery(delivery: Delivery): Promise<void> {
    const key = deliveryKey(delivery.subscription, delivery.id);
    await this.#redis
      .multi()
      .hset(EVENT_DELIVERIES, key, JSON.stringify(delivery))
      .zadd(EVENT_DELIVERIES_INDEX, 'NX', Date.parse(delivery.recordedAt), key)
      .exec();
  }

  async delivery(subscription: string, id: string): Promise<Delivery | undefined> {
    const text = await this.#redis.hget(EVENT_DELIVERIES, deliveryKey(subscription, id));
    return text === null ? undefined : (JSON.parse(text) as Delivery);
  }

  async deliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    const keys = await this.#redis.zrevrange(EVENT_DELIVERIES_INDEX, 0, RECENT_DELIVERIES - 1);
    if (keys.length === 0) return [];
    const texts = await this.#redis.hmget(EVENT_DELIVERIES, ...keys);
    const all = texts.flatMap((text) => (text === null ? [] : [JSON.parse(text) as Delivery]));
    return matching(all, filter);
  }

  async disabledAt(subscription: string): Promise<string | undefined> {
    return (await this.#redis.get(eventDisabledKey(subscription))) ?? undefined;
  }

  async disable(subscription: string, url: string): Promise<void> {
    await this.#redis.set(eventDisabledKey(subscription), url);
  }

  /** Gives up this replica's leases: another replica delivers at once. */
  async close(): Promise<void> {
    await Promise.all(
      this.#subscriptions.map((name) =>
        releaseLease(this.#redis, this.#ownerLease(name)).catch(() => undefined),
      ),
    );
  }
}
