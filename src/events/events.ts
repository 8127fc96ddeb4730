/**
 * Events (docs/events.md): what the build worker's listener and retention record, and the
 * delivery loops, one per subscription. Recording awaits the journal only (never a receiver), so
 * a build's answer waits a write; deliveries happen beside the builds.
 */
import type { EventSubscription, EventsConfig } from '../config/types.js';
import type { EventMetrics } from '../observability/event-metrics.js';
import { retryAfterDelays } from '../errors/retry.js';
import type { Logger } from '../observability/logger.js';
import { attemptDelivery } from './attempt.js';
import {
  accessDecidedEvent,
  budgetEvent,
  buildEvents,
  imageDeletedEvent,
  type DecidedAccess,
  type DeletedImage,
} from './envelope.js';
import { subscribed, type EventScope } from './filter.js';
import type { BudgetCrossing } from '../usage/budget.js';
import { SubscriptionLoop, type LoopDeps, type LoopTiming } from './subscription-loop.js';
import type { CloudEvent, Delivery, DeliveryFilter, EndedBuild, EventJournal } from './types.js';

/**
 * The waits before each new try to record a build's events while the store refuses them (a
 * failover, Redis at maxmemory: about 45 s in all): a build's events are recorded, never dropped
 * (a try whose answer was lost may record one twice: the same event id, which receivers dedupe).
 */
const BUILD_EVENT_RETRIES_MS = [500, 1000, 2000, 4000, 8000, 16_000, 16_000];
export interface EventServiceDeps {
  readonly config: {
    readonly events: EventsConfig;
    readonly observability: { readonly serviceName: string };
  };
  readonly journal: EventJournal;
  readonly metrics: EventMetrics;
  readonly logger: Logger;
  readonly timing: LoopTiming;
  /** Stops the loops (the process is stopping). */
  readonly shutdownSignal?: AbortSignal;
  readonly attempt?: LoopDeps['attempt'];
}

export class EventService {
  readonly #deps: EventServiceDeps;
  readonly #loops: Map<string, SubscriptionLoop>;
  readonly #source: string;

  constructor(deps: EventServiceDeps) {
    this.#deps = deps;
    this.#source = `urn:image-build-service:${deps.config.observability.serviceName}`;
    this.#loops = new Map(
      deps.config.events.subscriptions.map((subscription) => [subscription.name, this.#loopOf(subscription)]),
    );
    deps.shutdownSignal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  #loopOf(subscription: EventSubscription): SubscriptionLoop {
    const { journal, metrics, logger, timing, config } = this.#deps;
    return new SubscriptionLoop({
      subscription,
      journal,
      metrics,
      logger,
      timing,
      retrySeconds: config.events.retrySeconds,
      attempt: this.#deps.attempt ?? ((s, e) => attemptDelivery(s, e)),
    });
  }

  start(): this {
    for (const loop of this.#loops.values()) loop.start();
    return this;
  }

  /** The build worker's listener: a finished build's events, recorded before its answer is sent. */
  readonly onBuildEnded = async (build: EndedBuild): Promise<void> => {
    const scope = { repository: build.repository, status: build.status };
    for (const event of buildEvents(build, this.#source))
      await retryAfterDelays(() => this.record(event, scope), { delaysMs: BUILD_EVENT_RETRIES_MS });
  };

  /** Retention's deletion listener: an image.deleted, recorded before the run goes on. */
  readonly emitImageDeleted = async (deleted: DeletedImage): Promise<void> => {
    await this.record(imageDeletedEvent(deleted, this.#source), {});
  };

  /** The audit trail's listener: an access.decided, recorded before the request is answered. */
  readonly emitAccessDecided = async (decided: DecidedAccess): Promise<void> => {
    await this.record(accessDecidedEvent(decided, this.#source), {});
  };

  /** A tenant's budget warning or exceeded (docs/usage.md), recorded once per crossing. */
  readonly emitBudget = async (crossing: BudgetCrossing): Promise<void> => {
    await this.record(budgetEvent(crossing, this.#source), {});
  };

  /** Records `event` for every subscription it matches, then wakes their loops. */
  async record(event: CloudEvent, scope: EventScope): Promise<void> {
    const targets = this.#deps.config.events.subscriptions.filter((s) => subscribed(s, event.type, scope));
    if (targets.length === 0) return;
    const deliveries = targets.map((target): Delivery => ({
      id: event.id,
      subscription: target.name,
      type: event.type,
      status: 'pending',
      attempts: 0,
      recordedAt: event.time,
    }));
    await this.#deps.journal.record(event, deliveries);
    for (const s of targets) this.#loops.get(s.name)?.poke();
  }

  deliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    return this.#deps.journal.deliveries(filter);
  }

  /** Stops the loops and gives up this instance's leases. */
  async close(): Promise<void> {
    await Promise.all([...this.#loops.values()].map((loop) => loop.stop()));
    await this.#deps.journal.close();
  }
}
