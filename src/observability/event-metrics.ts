/**
 * The event delivery series (docs/events.md), labelled by subscription name (never its URL or
 * secrets). Pending is what this instance last read of the subscription's journal.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export class EventMetrics {
  readonly deliveriesTotal: Counter<'subscription' | 'result'>;
  readonly pending: Gauge<'subscription'>;

  constructor(registry: Registry) {
    this.deliveriesTotal = new Counter({
      name: 'service_event_deliveries_total',
      help: 'Event delivery attempts by subscription and result (delivered, retried, failed, disabled).',
      labelNames: ['subscription', 'result'],
      registers: [registry],
    });
    this.pending = new Gauge({
      name: 'service_event_deliveries_pending',
      help: 'Events recorded for a subscription and not yet delivered (nor given up).',
      labelNames: ['subscription'],
      registers: [registry],
    });
  }
}
