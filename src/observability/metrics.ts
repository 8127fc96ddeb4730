import { EventMetrics } from './event-metrics.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BuilderMetrics } from './builder-metrics.js';

export const BUILD_STATUSES = ['success', 'failure', 'invalid_request', 'busy'] as const;
export const IMAGE_CHECK_RESULTS = ['exists', 'absent', 'error'] as const;
export const IMAGE_DELETE_RESULTS = ['deleted', 'unsupported', 'error'] as const;
export const DEVCONTAINER_LOOKUP_RESULTS = ['found', 'absent', 'no_metadata', 'error'] as const;
/** A retention run: it deleted (or had nothing to delete), logged its plan, found another run, failed. */
export const RETENTION_RUN_RESULTS = ['success', 'dry_run', 'skipped', 'error'] as const;
export const RETENTION_IMAGE_ACTIONS = ['kept', 'deleted', 'unsupported', 'error'] as const;

export type BuildStatus = (typeof BUILD_STATUSES)[number];
export type ImageCheckResult = (typeof IMAGE_CHECK_RESULTS)[number];
export type ImageDeleteResult = (typeof IMAGE_DELETE_RESULTS)[number];
export type DevcontainerLookupResult = (typeof DEVCONTAINER_LOOKUP_RESULTS)[number];
export type RetentionRunResult = (typeof RETENTION_RUN_RESULTS)[number];
export type RetentionImageAction = (typeof RETENTION_IMAGE_ACTIONS)[number];

/** Build durations reach from a second to an hour (the default build timeout). */
export const BUILD_DURATION_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];

/** A registry with Node's default metrics (registered first: /metrics lists them first). */
function withDefaultMetrics(registry: Registry): Registry {
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * The service's metrics on a private registry (one per app, so tests never share counters).
 * Every label value docs/operations.md lists exists from the start at 0.
 */
export class Metrics {
  readonly registry = withDefaultMetrics(new Registry());
  /** The builder fleet's series (labelled `builder`). */
  readonly builders = new BuilderMetrics(this.registry);
  /** The event deliveries' series (labelled `subscription`). */
  readonly events = new EventMetrics(this.registry);
  readonly #registers = [this.registry];
  readonly buildsTotal: Counter<'status'> = new Counter({
    name: 'service_builds_total',
    help: 'POST /build attempts by final status.',
    labelNames: ['status'],
    registers: this.#registers,
  });
  readonly buildDuration: Histogram<'status'> = new Histogram({
    name: 'service_build_duration_seconds',
    help: 'Wall-clock time of builds (clone, build and push) by final status.',
    labelNames: ['status'],
    buckets: BUILD_DURATION_BUCKETS,
    registers: this.#registers,
  });
  readonly imageChecksTotal: Counter<'result'> = new Counter({
    name: 'service_image_checks_total',
    help: 'GET /image calls by result.',
    labelNames: ['result'],
    registers: this.#registers,
  });
  readonly imageDeletesTotal: Counter<'result'> = new Counter({
    name: 'service_image_deletes_total',
    help: 'DELETE /image calls by result.',
    labelNames: ['result'],
    registers: this.#registers,
  });
  readonly prebuildTriggersTotal: Counter<'trigger' | 'decision'> = new Counter({
    name: 'service_prebuild_triggers_total',
    help: 'Prebuild deliveries and scheduled checks by trigger (push, reconcile, refresh) and decision.',
    labelNames: ['trigger', 'decision'],
    registers: this.#registers,
  });
  readonly devcontainerLookupsTotal: Counter<'result'> = new Counter({
    name: 'service_devcontainer_lookups_total',
    help: 'GET /devcontainer calls by result.',
    labelNames: ['result'],
    registers: this.#registers,
  });
  readonly retentionRunsTotal: Counter<'result'> = new Counter({
    name: 'service_retention_runs_total',
    help: 'Image retention runs (scheduled or POST /retention/run) by result.',
    labelNames: ['result'],
    registers: this.#registers,
  });
  readonly retentionImagesTotal: Counter<'action'> = new Counter({
    name: 'service_retention_images_total',
    help: 'Images a retention run in delete mode kept, deleted, found undeletable (unsupported) or failed on.',
    labelNames: ['action'],
    registers: this.#registers,
  });
  readonly buildsInFlight: Gauge = new Gauge({
    name: 'service_builds_in_flight',
    help: 'Builds running now.',
    registers: this.#registers,
  });
  readonly buildsCapacity: Gauge = new Gauge({
    name: 'service_builds_capacity',
    help: 'Maximum concurrent builds of this instance (0 means no limit).',
    registers: this.#registers,
  });
  readonly buildReusesTotal: Counter = new Counter({
    name: 'service_build_reuses_total',
    help: 'POST /build answers given without a build (inputs unchanged: the earlier image relabelled).',
    registers: this.#registers,
  });
  readonly buildFollowsTotal: Counter = new Counter({
    name: 'service_builds_coalesced_total',
    help: 'POST /build requests that followed an identical build in flight instead of starting one.',
    registers: this.#registers,
  });

  constructor() {
    for (const status of BUILD_STATUSES) {
      this.buildsTotal.inc({ status }, 0);
      this.buildDuration.zero({ status });
    }
    for (const result of IMAGE_CHECK_RESULTS) this.imageChecksTotal.inc({ result }, 0);
    for (const result of IMAGE_DELETE_RESULTS) this.imageDeletesTotal.inc({ result }, 0);
    for (const result of DEVCONTAINER_LOOKUP_RESULTS) this.devcontainerLookupsTotal.inc({ result }, 0);
    for (const result of RETENTION_RUN_RESULTS) this.retentionRunsTotal.inc({ result }, 0);
    for (const action of RETENTION_IMAGE_ACTIONS) this.retentionImagesTotal.inc({ action }, 0);
  }

  countBuild(status: BuildStatus, durationSeconds?: number): void {
    this.buildsTotal.inc({ status });
    if (durationSeconds !== undefined) this.buildDuration.observe({ status }, durationSeconds);
  }
}
