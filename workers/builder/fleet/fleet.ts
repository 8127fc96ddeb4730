/**
 * The builder fleet (docs/fleet.md): one buildx remote builder per endpoint, a build (or each of its
 * platforms, platform-placement.ts) placed by its repository (placement.ts), at most `maxPerBuilder`
 * builds per builder (a full one passes the build to the next in its order; every healthy one full
 * is a 429), and health (health.ts): a builder that does not answer before the first step is marked
 * down and the build moves on (build-placement.ts).
 */
import type { Config } from '../../../src/config/types.js';
import { createHash } from 'node:crypto';
import { builderEndpoints, declaredPlatforms } from '../../../src/config/builder-endpoints.js';
import type { ProcessGroups } from '../../../src/exec/process-groups.js';
import type { BuilderMetrics } from '../../../src/observability/builder-metrics.js';
import type { Logger } from '../../../src/observability/logger.js';
import { BUILD_STATUSES, type BuildStatus } from '../../../src/observability/metrics.js';
import { RemoteBuilder, builderSpecs, type BuilderHandle, type BuilderNode } from '../remote-builder.js';
export { Placement } from './build-placement.js';
import {
  Placement,
  platformUnavailable,
  type Member,
  type PlacementFleet,
  type Slot,
} from './build-placement.js';
import { BuilderCacheUse, type CacheUse } from './cache-use.js';
import { BuilderHealth, type BuilderState } from './health.js';
import { placementKey, placementOrder } from './placement.js';
import { placesPerPlatform, platformOrders } from './platform-placement.js';
import { createProbe, type Probe } from './probe.js';

/** Milliseconds a probe may take. */
const PROBE_TIMEOUT_MS = 3000;

export type FleetConfig = Pick<
  Config,
  'childEnv' | 'dockerConfigDir' | 'builderName' | 'builders' | 'builderTls' | 'build'
>;

export interface FleetOptions {
  readonly config: FleetConfig;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  readonly metrics: BuilderMetrics;
  readonly groups?: ProcessGroups;
  /** The health probe (default: HTTP/2 PING with the fleet's TLS settings). */
  readonly probe?: Probe;
}

export class BuilderFleet implements PlacementFleet {
  readonly #config: FleetConfig;
  readonly #groups: ProcessGroups | undefined;
  readonly #members: Member[];
  readonly #limit: number;
  readonly #metrics: BuilderMetrics;
  /** The buildx builders with several nodes, by name. */
  readonly #multiNode = new Map<string, RemoteBuilder>();
  readonly health: BuilderHealth;
  readonly nativeOnly: boolean;
  /** Each builder's cache use, read with buildx at most once a minute (cache-use.ts). */
  readonly #cacheUse: BuilderCacheUse;

  constructor(options: FleetOptions) {
    const { config } = options;
    this.#config = config;
    this.#groups = options.groups;
    this.#limit = config.build.maxPerBuilder;
    this.nativeOnly = config.build.nativePlatformsOnly;
    this.#metrics = options.metrics;
    this.#cacheUse = new BuilderCacheUse({
      config,
      ...(options.groups === undefined ? {} : { groups: options.groups }),
    });
    this.#members = builderSpecs(config).map((spec) => ({
      spec,
      remote: new RemoteBuilder(config, spec, options.groups),
      platforms: declaredPlatforms(config.builders, spec.endpoint),
      inFlight: 0,
    }));
    const endpoints = builderEndpoints(config);
    options.metrics.register(endpoints, BUILD_STATUSES);
    this.health = new BuilderHealth({
      endpoints,
      probe: options.probe ?? createProbe(config.builderTls, PROBE_TIMEOUT_MS),
      logger: options.logger,
      metrics: options.metrics,
    });
  }

  get size(): number {
    return this.#members.length;
  }

  /**
   * Each builder's state, declared platforms and (once read: cache-use.ts, never waited for) its
   * cache use, in the order configured.
   */
  /** Resolves once no cache-use reading runs (the drain on SIGTERM waits for it). */
  settled(): Promise<void> {
    return this.#cacheUse.settled();
  }

  states(): (BuilderState & { inFlight: number; platforms: readonly string[]; cache?: CacheUse })[] {
    return this.health.states().map((state, index) => {
      const member = this.#members[index];
      const cache = member === undefined ? undefined : this.#cacheUse.read(member.spec.name);
      return {
        ...state,
        inFlight: member?.inFlight ?? 0,
        platforms: member?.platforms ?? [],
        ...(cache === undefined ? {} : { cache }),
      };
    });
  }

  /**
   * Refuses, before any work, a build of `platforms` that cannot be placed: a platform no builder
   * can build (400), or with only native platforms one whose builders are all down (503).
   */
  refuse(platforms: readonly string[]): void {
    if (!placesPerPlatform(platforms, this.#declarations(), this.nativeOnly)) return;
    for (const { platform, order } of platformOrders('', platforms, this.#declarations(), this.nativeOnly)) {
      if (this.nativeOnly && !order.some((endpoint) => this.health.isUp(endpoint))) {
        throw platformUnavailable(platform);
      }
    }
  }

  /**
   * Places a build of `repository`/`branch` (each of its `platforms` on a builder declaring it, when
   * builders declare platforms) and takes its places (synchronously); `full` when every builder
   * that answers runs its limit (the caller refuses the build, workers/flow/busy.ts), or with only native
   * platforms throws PLATFORM_BUILDERS_UNAVAILABLE (503). Undefined without builders. O(builders).
   */
  place(
    repository: string,
    branch: string | undefined,
    platforms: readonly string[] = [],
  ): Placement | 'full' | undefined {
    if (this.#members.length === 0) return undefined;
    const key = placementKey(repository, branch);
    if (!placesPerPlatform(platforms, this.#declarations(), this.nativeOnly)) {
      const order = this.#inOrder(
        placementOrder(
          key,
          this.#members.map((m) => m.spec.endpoint),
        ),
      );
      const member = this.#firstWithRoom(order, new Set());
      if (member === undefined) return 'full';
      return new Placement(this, [{ order, native: 0, member }]);
    }
    const slots: Slot[] = [];
    for (const { platform, order: endpoints, native } of platformOrders(
      key,
      platforms,
      this.#declarations(),
      this.nativeOnly,
    )) {
      const order = this.#inOrder(endpoints);
      const member = this.#firstWithRoom(order, new Set(slots.map((slot) => slot.member)));
      if (member === undefined || (this.nativeOnly && !this.health.isUp(member.spec.endpoint))) {
        if (this.nativeOnly) throw platformUnavailable(platform);
        return 'full';
      }
      slots.push({ platform, order, native, member });
    }
    return new Placement(this, slots);
  }

  #declarations(): { endpoint: string; platforms: readonly string[] }[] {
    return this.#members.map((m) => ({ endpoint: m.spec.endpoint, platforms: m.platforms }));
  }

  #inOrder(endpoints: readonly string[]): Member[] {
    return endpoints.map((endpoint) => this.#members.find((m) => m.spec.endpoint === endpoint) as Member);
  }

  /**
   * The first healthy builder with room (one this build already uses has room); with none healthy,
   * the first with room (it may be back).
   */
  #firstWithRoom(order: readonly Member[], taken: ReadonlySet<Member>, except?: Member): Member | undefined {
    const room = (m: Member): boolean =>
      m !== except && (taken.has(m) || this.#limit === 0 || m.inFlight < this.#limit);
    const healthy = order.filter((m) => this.health.isUp(m.spec.endpoint));
    if (except !== undefined) return healthy.find(room);
    return healthy.length > 0 ? healthy.find(room) : order.find(room);
  }

  /** Internal to Placement: the next builder for a slot leaving `from`. */
  next(order: readonly Member[], from: Member, taken: ReadonlySet<Member>): Member | undefined {
    return this.#firstWithRoom(order, taken, from);
  }

  check(endpoint: string): Promise<string | undefined> {
    return this.health.check(endpoint);
  }

  /** Internal to Placement: the buildx builder with these nodes (one per set of nodes). */
  multiNode(nodes: readonly BuilderNode[]): BuilderHandle {
    const digest = createHash('sha256').update(JSON.stringify(nodes)).digest('hex').slice(0, 12);
    const name = `${this.#config.builderName}-nodes-${digest}`;
    let builder = this.#multiNode.get(name);
    if (builder === undefined) {
      const tls = this.#config.builderTls;
      const endpoint = nodes[0]?.endpoint ?? '';
      builder = new RemoteBuilder(
        this.#config,
        { name, endpoint, nodes, ...(tls === undefined ? {} : { tls }) },
        this.#groups,
      );
      this.#multiNode.set(name, builder);
    }
    return builder;
  }

  take(member: Member): void {
    member.inFlight += 1;
    this.#metrics.inFlight.set({ builder: member.spec.endpoint }, member.inFlight);
  }

  release(member: Member, status?: BuildStatus): void {
    member.inFlight = Math.max(0, member.inFlight - 1);
    this.#metrics.inFlight.set({ builder: member.spec.endpoint }, member.inFlight);
    if (status !== undefined) this.#metrics.buildsTotal.inc({ builder: member.spec.endpoint, status });
  }
}
