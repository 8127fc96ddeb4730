/**
 * The delivery of one subscription: a loop of steps, each taking the oldest event not yet done
 * with and attempting it when due, so that events go out in order and a slow receiver holds up
 * no other subscription. What an attempt's verdict leads to is the SETTLE table.
 */
import type { EventSubscription } from '../config/types.js';
import type { EventMetrics } from '../observability/event-metrics.js';
import type { Logger } from '../observability/logger.js';
import { lastStatusOf, verdictOf, type AttemptAnswer, type Verdict } from './outcome.js';
import { retryDelayMs } from './schedule.js';
import type { CloudEvent, Delivery, EventJournal, JournalEntry } from './types.js';

export interface LoopTiming {
  /** How often an idle loop looks for events (besides being woken by a recording). */
  readonly idlePollMs: number;
  /** How often a replica that does not deliver the subscription asks for its lease again. */
  readonly ownerPollMs: number;
  /** A wait never exceeds this, so that the lease is renewed while a retry is due. */
  readonly maxWaitMs: number;
}

export interface LoopDeps {
  readonly subscription: EventSubscription;
  readonly journal: EventJournal;
  readonly retrySeconds: readonly number[];
  readonly metrics: EventMetrics;
  readonly logger: Logger;
  readonly timing: LoopTiming;
  readonly attempt: (subscription: EventSubscription, event: CloudEvent) => Promise<AttemptAnswer>;
  readonly random?: () => number;
}

/** What the loop does once an attempt was answered: the delivery's new state and the wait before the next step. */
type Settle = (
  loop: SubscriptionLoop,
  entry: JournalEntry,
  delivery: Delivery,
  verdict: Verdict,
) => Promise<number>;

const SETTLE: Record<Verdict['next'], Settle> = {
  delivered: async (loop, entry, delivery) => {
    await loop.finish(entry, { ...delivery, status: 'delivered' }, 'delivered');
    return 0;
  },
  disable: async (loop, _entry, delivery) => {
    await loop.disable({ ...delivery, status: 'disabled' });
    return loop.deps.timing.maxWaitMs;
  },
  retry: async (loop, entry, delivery, verdict) => {
    const delay =
      verdict.next === 'retry' && verdict.waitMs !== undefined
        ? verdict.waitMs
        : retryDelayMs(delivery.attempts, loop.deps.retrySeconds, loop.deps.random);
    if (delay === undefined) {
      await loop.finish(entry, { ...delivery, status: 'failed' }, 'failed');
      return 0;
    }
    await loop.deps.journal.saveDelivery({
      ...delivery,
      nextAttemptAt: new Date(Date.now() + delay).toISOString(),
    });
    loop.deps.metrics.deliveriesTotal.inc({ subscription: delivery.subscription, result: 'retried' });
    return Math.min(delay, loop.deps.timing.maxWaitMs);
  },
};

export class SubscriptionLoop {
  readonly deps: LoopDeps;
  #stopped = false;
  #wake: (() => void) | undefined;
  #running: Promise<void> | undefined;

  constructor(deps: LoopDeps) {
    this.deps = deps;
  }

  get name(): string {
    return this.deps.subscription.name;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** An event was recorded: look now. */
  poke(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.poke();
    await this.#running;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      let waitMs: number;
      try {
        waitMs = await this.#step();
      } catch (err) {
        this.deps.logger.warn({ err, subscription: this.name }, 'event delivery step failed; retrying');
        waitMs = this.deps.timing.idlePollMs;
      }
      if (waitMs > 0 && !this.#stopped) await this.#sleep(waitMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  /** One step; resolves with how long to wait before the next. */
  async #step(): Promise<number> {
    const { journal, subscription, timing } = this.deps;
    if ((await journal.disabledAt(this.name)) === subscription.url) return timing.maxWaitMs;
    if (!(await journal.own(this.name))) return timing.ownerPollMs;
    const entry = await journal.head(this.name);
    this.deps.metrics.pending.set({ subscription: this.name }, await journal.pending(this.name));
    if (entry === undefined) return timing.idlePollMs;
    const delivery = (await journal.delivery(this.name, entry.event.id)) ?? this.#fresh(entry.event);
    const due = delivery.nextAttemptAt === undefined ? 0 : Date.parse(delivery.nextAttemptAt) - Date.now();
    if (due > 0) return Math.min(due, timing.maxWaitMs);
    const answer = await this.deps.attempt(subscription, entry.event);
    const attempted: Delivery = {
      ...delivery,
      attempts: delivery.attempts + 1,
      lastStatus: lastStatusOf(answer),
      nextAttemptAt: undefined,
    };
    return SETTLE[verdictOf(answer).next](this, entry, withoutUndefined(attempted), verdictOf(answer));
  }

  #fresh(event: CloudEvent): Delivery {
    return {
      id: event.id,
      subscription: this.name,
      type: event.type,
      status: 'pending',
      attempts: 0,
      recordedAt: event.time,
    };
  }

  /** The head is done with: delivered, or failed once the schedule is used up. */
  async finish(entry: JournalEntry, delivery: Delivery, result: 'delivered' | 'failed'): Promise<void> {
    await this.deps.journal.saveDelivery(delivery);
    await this.deps.journal.done(this.name, entry);
    this.deps.metrics.deliveriesTotal.inc({ subscription: this.name, result });
    if (result === 'failed')
      this.deps.logger.warn(
        { subscription: this.name, eventId: delivery.id, attempts: delivery.attempts },
        'event delivery failed: retries used up',
      );
  }

  /** A 410: the subscription is disabled at its URL (its events stay recorded). */
  async disable(delivery: Delivery): Promise<void> {
    await this.deps.journal.saveDelivery(delivery);
    await this.deps.journal.disable(this.name, this.deps.subscription.url);
    this.deps.metrics.deliveriesTotal.inc({ subscription: this.name, result: 'disabled' });
    this.deps.logger.warn(
      { subscription: this.name, host: new URL(this.deps.subscription.url).host },
      'event subscription disabled: its receiver answered 410 Gone',
    );
  }
}

function withoutUndefined(delivery: Delivery): Delivery {
  return Object.fromEntries(
    Object.entries(delivery).filter(([, v]) => v !== undefined),
  ) as unknown as Delivery;
}
