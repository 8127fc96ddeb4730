/**
 * Each builder's health as this instance sees it (docs/fleet.md; in Redis mode every replica keeps
 * its own). A builder found unreachable when a build starts is down at once; every builder is
 * probed in the background every PROBE_INTERVAL_MS (so one lost while idle is noticed, and a down
 * one comes back when it answers). Changes are logged and shown in service_builder_up.
 */
import type { Logger } from '../../../src/observability/logger.js';
import type { BuilderMetrics } from '../../../src/observability/builder-metrics.js';
import type { Probe } from './probe.js';

const PROBE_INTERVAL_MS = 5000;

export interface BuilderState {
  readonly endpoint: string;
  readonly up: boolean;
  /** Why it is down (the last failure), when it is. */
  readonly reason?: string;
}

export class BuilderHealth {
  readonly #states = new Map<string, BuilderState>();
  readonly #probe: Probe;
  readonly #logger: Pick<Logger, 'warn' | 'info'>;
  readonly #metrics: Pick<BuilderMetrics, 'up'>;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;

  constructor(options: {
    endpoints: readonly string[];
    probe: Probe;
    logger: Pick<Logger, 'warn' | 'info'>;
    metrics: Pick<BuilderMetrics, 'up'>;
  }) {
    for (const endpoint of options.endpoints) this.#states.set(endpoint, { endpoint, up: true });
    this.#probe = options.probe;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
  }

  isUp(endpoint: string): boolean {
    return this.#states.get(endpoint)?.up ?? false;
  }

  states(): BuilderState[] {
    return [...this.#states.values()];
  }

  markDown(endpoint: string, reason: string): void {
    if (this.#states.get(endpoint)?.up === true)
      this.#logger.warn({ builder: endpoint, reason }, 'builder down');
    this.#states.set(endpoint, { endpoint, up: false, reason });
    this.#metrics.up.set({ builder: endpoint }, 0);
  }

  markUp(endpoint: string): void {
    if (this.#states.get(endpoint)?.up === false) this.#logger.info({ builder: endpoint }, 'builder up');
    this.#states.set(endpoint, { endpoint, up: true });
    this.#metrics.up.set({ builder: endpoint }, 1);
  }

  /** Probes `endpoint` now and records the answer; resolves with the failure's reason, if any. */
  async check(endpoint: string): Promise<string | undefined> {
    const result = await this.#probe(endpoint);
    if (result.ok) {
      this.markUp(endpoint);
      return undefined;
    }
    this.markDown(endpoint, result.reason);
    return result.reason;
  }

  /** Starts the background probes (one round at a time); they stop when `signal` aborts. */
  start(signal: AbortSignal, intervalMs = PROBE_INTERVAL_MS): void {
    if (this.#timer !== undefined || signal.aborted) return;
    this.#timer = setInterval(() => void this.#round(), intervalMs);
    this.#timer.unref();
    signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #round(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      await Promise.all([...this.#states.keys()].map((endpoint) => this.check(endpoint)));
    } finally {
      this.#probing = false;
    }
  }
}
