/**
 * The shapes of events (docs/events.md): the CloudEvent sent, a delivery as GET /events/deliveries
 * lists it, and the journal that keeps events until they are delivered (a file in embedded mode, a
 * Redis stream with a consumer group in Redis mode).
 */
import type { BuildRecord } from '../builds/types.js';

/** A CloudEvents 1.0 event in structured mode (the request body). */
export interface CloudEvent {
  readonly specversion: '1.0';
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly time: string;
  /** The image reference. */
  readonly subject: string;
  readonly datacontenttype: 'application/json';
  readonly data: Record<string, unknown>;
}

/** A finished build as the worker hands it to its listeners (its answer included). */
export type EndedBuild = BuildRecord & {
  readonly answer?: { readonly status: number; readonly body: Record<string, unknown> };
  readonly trigger?: string;
};

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'disabled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One event for one subscription. */
export interface Delivery {
  /** The event's id, which is also every attempt's `webhook-id`. */
  readonly id: string;
  readonly subscription: string;
  readonly type: string;
  readonly status: DeliveryState;
  readonly attempts: number;
  /** The HTTP status of the last attempt, or `timeout` / `unreachable`. */
  readonly lastStatus?: number | string;
  /** ISO 8601: when the next attempt is due (pending only). */
  readonly nextAttemptAt?: string;
  readonly recordedAt: string;
}

export interface DeliveryFilter {
  readonly subscription?: string;
  readonly status?: DeliveryState;
}

/** An event held for a subscription, by its position in that subscription's journal. */
export interface JournalEntry {
  readonly position: string;
  readonly event: CloudEvent;
}

export interface EventJournal {
  /** Records `event` for the subscription of each of `deliveries` (pending), durably, before it resolves. */
  record(event: CloudEvent, deliveries: readonly Delivery[]): Promise<void>;
  /** Whether this instance delivers `subscription` now (Redis: it holds or took its lease). */
  own(subscription: string): Promise<boolean>;
  /** The oldest event not yet delivered to `subscription` (taken over from a dead replica when so). */
  head(subscription: string): Promise<JournalEntry | undefined>;
  /** The head is done with (delivered, failed or dropped). */
  done(subscription: string, entry: JournalEntry): Promise<void>;
  /** Events recorded and not yet done with. */
  pending(subscription: string): Promise<number>;
  saveDelivery(delivery: Delivery): Promise<void>;
  delivery(subscription: string, id: string): Promise<Delivery | undefined>;
  /** Recent deliveries, newest first. */
  deliveries(filter: DeliveryFilter): Promise<Delivery[]>;
  /** The URL `subscription` was disabled at (a 410), if any. */
  disabledAt(subscription: string): Promise<string | undefined>;
  disable(subscription: string, url: string): Promise<void>;
  close(): Promise<void>;
}
