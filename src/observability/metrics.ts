import { EventMetrics } from './event-metrics.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BuilderMetrics } from './builder-metrics.js';
import { QUEUE_CLASSES } from '../rules/build-classes.js';

export const BUILD_STATUSES = ['success', 'failure', 'invalid_request', 'busy'] as const;
const IMAGE_CHECK_RESULTS = ['exists', 'absent', 'error'] as const;
const IMAGE_DELETE_RESULTS = ['deleted', 'unsupported', 'error'] as const;
const DEVCONTAINER_LOOKUP_RESULTS = ['found', 'absent', 'no_metadata', 'error'] as const;
/** A retention run: it deleted (or had nothing to delete), logged its plan, found another run, failed. */
const RETENTION_RUN_RESULTS = ['success', 'dry_run', 'skipped', 'error'] as const;
const RETENTION_IMAGE_ACTIONS = ['kept', 'deleted', 'unsupported', 'error'] as const;

/** How an ended build is counted per tenant (docs/usage.md). */
export const TENANT_BUILD_OUTCOMES = ['built', 'reused', 'failed'] as const;

export type BuildStatus = (typeof BUILD_STATUSES)[number];
export type ImageCheckResult = (typeof IMAGE_CHECK_RESULTS)[number];
export type ImageDeleteResult = (typeof IMAGE_DELETE_RESULTS)[number];
export type DevcontainerLookupResult = (typeof DEVCONTAINER_LOOKUP_RESULTS)[number];
export type RetentionRunResult = (typeof RETENTION_RUN_RESULTS)[number];

/** Build durations reach from a second to an hour (the default build timeout). */
const BUILD_DURATION_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];

/** A registry with Node's default metrics (registered first: /metrics lists them first). */
function withDefaultMetrics(registry: Registry): Registry {
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Each metric's help text, by name (docs/operations.md lists them). */
const HELP = {
  service_builds_total: 'POST /build attempts by final status.',
  service_build_duration_seconds: 'Wall-clock time of builds (clone, build and push) by final status.',
  service_image_checks_total: 'GET /image calls by result.',
  service_image_deletes_total: 'DELETE /image calls by result.',
  service_prebuild_triggers_total:
    'Prebuild deliveries and scheduled checks by trigger (push, reconcile, refresh) and decision.',
  service_devcontainer_lookups_total: 'GET /devcontainer calls by result.',
  service_retention_runs_total: 'Image retention runs (scheduled or POST /retention/run) by result.',
  service_retention_images_total:
    'Images a retention run in delete mode kept, deleted, found undeletable (unsupported) or failed on.',
  service_builds_in_flight: 'Builds running now.',
  service_builds_capacity: 'Maximum concurrent builds of this instance (0 means no limit).',
  service_build_steps_total:
    "BuildKit steps of the builds that ran, by whether BuildKit's cache answered them (cached) or they ran.",
  service_build_reuses_total:
    'POST /build answers given without a build (inputs unchanged: the earlier image relabelled).',
  service_builds_coalesced_total:
    'POST /build requests that followed an identical build in flight instead of starting one.',
  service_build_queue_depth: 'Async builds and prebuilds waiting for a slot, by class (docs/queue.md).',
  service_build_queue_wait_seconds: 'Time builds waited in the queue before a slot took them, by class.',
  service_auth_decisions_total:
    'Access decisions with identities enforced, by decision (allow, deny) and action (docs/auth.md).',
  service_tenant_run_seconds_total:
    'Run time of ended builds (slot taken to answer), by tenant (named tenants, else other; docs/usage.md).',
  service_tenant_saved_seconds_total:
    'Build time saved by reuses and BuildKit cached steps, measured from earlier runs, by tenant.',
  service_tenant_builds_total: 'Ended builds by tenant and outcome (built, reused, failed).',
  service_tenant_budget_used_ratio:
    "A named tenant's run time this month over its monthly budget, as this replica last counted it.",
  service_auth_key_fetches_total:
    "Fetches of an OIDC issuer's discovery document and key set, by issuer and result (ok, error).",
} as const;

type MetricName = keyof typeof HELP;
/** Each label of a metric, with the values that exist from the start at 0 (none: created when used). */
type Labels<L extends string> = Readonly<Record<L, readonly string[]>>;

/** The series of `labels` that exist from the start: one per value of each label that lists values. */
const zeroSeries = <L extends string>(labels: Labels<L>): Partial<Record<L, string>>[] =>
  (Object.entries(labels) as [L, readonly string[]][]).flatMap(([label, values]) =>
    values.map((value) => ({ [label]: value }) as Partial<Record<L, string>>),
  );

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
  readonly buildsTotal = this.#counter('service_builds_total', { status: BUILD_STATUSES });
  readonly buildDuration = this.#histogram('service_build_duration_seconds', { status: BUILD_STATUSES });
  readonly imageChecksTotal = this.#counter('service_image_checks_total', { result: IMAGE_CHECK_RESULTS });
  readonly imageDeletesTotal = this.#counter('service_image_deletes_total', { result: IMAGE_DELETE_RESULTS });
  readonly prebuildTriggersTotal = this.#counter('service_prebuild_triggers_total', {
    trigger: [],
    decision: [],
  });
  readonly devcontainerLookupsTotal = this.#counter('service_devcontainer_lookups_total', {
    result: DEVCONTAINER_LOOKUP_RESULTS,
  });
  readonly retentionRunsTotal = this.#counter('service_retention_runs_total', {
    result: RETENTION_RUN_RESULTS,
  });
  readonly retentionImagesTotal = this.#counter('service_retention_images_total', {
    action: RETENTION_IMAGE_ACTIONS,
  });
  readonly buildsInFlight = new Gauge({ ...this.#named('service_builds_in_flight'), labelNames: [] });
  readonly buildsCapacity = new Gauge({ ...this.#named('service_builds_capacity'), labelNames: [] });
  readonly buildReusesTotal = this.#counter('service_build_reuses_total', {});
  readonly buildStepsTotal = this.#counter('service_build_steps_total', { cached: ['true', 'false'] });
  readonly buildFollowsTotal = this.#counter('service_builds_coalesced_total', {});
  readonly queueDepth = this.#gauge('service_build_queue_depth', { class: QUEUE_CLASSES });
  readonly queueWait = this.#histogram('service_build_queue_wait_seconds', { class: QUEUE_CLASSES });
  readonly authDecisionsTotal = this.#counter('service_auth_decisions_total', { decision: [], action: [] });
  readonly authKeyFetchesTotal = this.#counter('service_auth_key_fetches_total', { issuer: [], result: [] });
  readonly tenantRunSeconds = this.#counter('service_tenant_run_seconds_total', { tenant: [] });
  readonly tenantSavedSeconds = this.#counter('service_tenant_saved_seconds_total', { tenant: [] });
  readonly tenantBudgetUsed = this.#gauge('service_tenant_budget_used_ratio', { tenant: [] });
  readonly tenantBuildsTotal = this.#counter('service_tenant_builds_total', {
    tenant: [],
    outcome: [],
  });

  #named(name: MetricName): { name: MetricName; help: string; registers: Registry[] } {
    return { name, help: HELP[name], registers: [this.registry] };
  }

  #counter<L extends string = never>(name: MetricName, labels: Labels<L>): Counter<L> {
    const counter = new Counter<L>({ ...this.#named(name), labelNames: Object.keys(labels) as L[] });
    for (const series of zeroSeries(labels)) counter.inc(series, 0);
    return counter;
  }

  #gauge<L extends string>(name: MetricName, labels: Labels<L>): Gauge<L> {
    const gauge = new Gauge<L>({ ...this.#named(name), labelNames: Object.keys(labels) as L[] });
    for (const series of zeroSeries(labels)) gauge.set(series, 0);
    return gauge;
  }

  #histogram<L extends string>(name: MetricName, labels: Labels<L>): Histogram<L> {
    const labelNames = Object.keys(labels) as L[];
    const histogram = new Histogram<L>({ ...this.#named(name), labelNames, buckets: BUILD_DURATION_BUCKETS });
    for (const series of zeroSeries(labels)) histogram.zero(series);
    return histogram;
  }

  countBuild(status: BuildStatus, durationSeconds?: number): void {
    this.buildsTotal.inc({ status });
    if (durationSeconds !== undefined) this.buildDuration.observe({ status }, durationSeconds);
  }
}
