/**
 * The builder fleet's metrics (docs/fleet.md), labelled `builder` with the endpoint as configured
 * (never credentials: an endpoint holding any is refused at startup). docs/openapi.yaml's metrics keep
 * their labels; these are beside them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export class BuilderMetrics {
  readonly up: Gauge<'builder'>;
  readonly inFlight: Gauge<'builder'>;
  readonly buildsTotal: Counter<'builder' | 'status'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({
      name: 'service_builder_up',
      help: 'Whether the builder answers (1) or is down (0), as this instance sees it.',
      labelNames: ['builder'],
      registers,
    });
    this.inFlight = new Gauge({
      name: 'service_builder_builds_in_flight',
      help: 'Builds placed on the builder and running now.',
      labelNames: ['builder'],
      registers,
    });
    this.buildsTotal = new Counter({
      name: 'service_builder_builds_total',
      help: 'Builds that ran on the builder, by final status.',
      labelNames: ['builder', 'status'],
      registers,
    });
  }

  /** Every builder's series from the start: up, nothing in flight, no build counted. */
  register(endpoints: readonly string[], statuses: readonly string[]): void {
    for (const builder of endpoints) {
      this.up.set({ builder }, 1);
      this.inFlight.set({ builder }, 0);
      for (const status of statuses) this.buildsTotal.inc({ builder, status }, 0);
    }
  }
}
