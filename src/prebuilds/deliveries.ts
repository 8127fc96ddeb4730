/**
 * The recent deliveries of this instance, in memory: the newest DELIVERY_HISTORY, newest first.
 */
import { randomUUID } from 'node:crypto';
import type { Delivery, DeliveryLog, NewDelivery } from './types.js';

const DELIVERY_HISTORY = 200;

export class MemoryDeliveryLog implements DeliveryLog {
  #entries: Delivery[] = [];

  add(delivery: NewDelivery): Promise<Delivery> {
    const entry: Delivery = { id: `dlv-${randomUUID()}`, at: new Date().toISOString(), ...delivery };
    this.#entries = [entry, ...this.#entries].slice(0, DELIVERY_HISTORY);
    return Promise.resolve(entry);
  }

  update(id: string, change: Pick<Delivery, 'decision' | 'reason'>): Promise<void> {
    this.#entries = this.#entries.map((e) => (e.id === id ? { ...e, ...change } : e));
    return Promise.resolve();
  }

  list(): Promise<Delivery[]> {
    return Promise.resolve([...this.#entries]);
  }
}
