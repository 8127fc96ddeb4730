/**
 * The recent deliveries an instance keeps in memory (embedded mode): the newest state of each,
 * at most RECENT_DELIVERIES, oldest dropped first. Listed newest first, filtered.
 */
import type { Delivery, DeliveryFilter } from './types.js';

export const RECENT_DELIVERIES = 1000;

export const deliveryKey = (subscription: string, id: string): string => `${subscription} ${id}`;

export class RecentDeliveries {
  readonly #byKey = new Map<string, Delivery>();

  put(delivery: Delivery): void {
    const key = deliveryKey(delivery.subscription, delivery.id);
    // Re-inserted: a Map keeps insertion order, and a delivery keeps its place by record time.
    if (!this.#byKey.has(key) && this.#byKey.size >= RECENT_DELIVERIES) {
      const oldest = this.#byKey.keys().next().value;
      if (oldest !== undefined) this.#byKey.delete(oldest);
    }
    this.#byKey.set(key, delivery);
  }

  get(subscription: string, id: string): Delivery | undefined {
    return this.#byKey.get(deliveryKey(subscription, id));
  }

  all(): Delivery[] {
    return [...this.#byKey.values()];
  }

  list(filter: DeliveryFilter): Delivery[] {
    return matching(this.all(), filter);
  }
}

/** `deliveries` filtered, newest first (by record time). */
export function matching(deliveries: readonly Delivery[], filter: DeliveryFilter): Delivery[] {
  return deliveries
    .filter((d) => filter.subscription === undefined || d.subscription === filter.subscription)
    .filter((d) => filter.status === undefined || d.status === filter.status)
    .sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
}
