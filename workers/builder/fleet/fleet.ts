/**
 * The builder fleet (docs/fleet.md): one buildx remote builder per endpoint, a build placed by its
 * repository (placement.ts), at most `maxPerBuilder` builds per builder (a full one passes the
 * build to the next in the repository's order; every healthy one full is a 429), and health
 * (health.ts): the builder is probed when the build is about to use it, and one that does not
 * answer is marked down and the build moves on to the next healthy one, once, before any step runs.
 */
import type { Config } from '../../../src/config/types.js';
import { buildersFull, stepFailed } from '../../../src/errors/errors.js';
import type { ProcessGroups } from '../../../src/exec/process-groups.js';
import type { BuilderMetrics } from '../../../src/observability/builder-metrics.js';
import type { Logger } from '../../../src/observability/logger.js';
import { BUILD_STATUSES, type BuildStatus } from '../../../src/observability/metrics.js';
import { RETRY_AFTER } from '../../common/retry-after.js';
import { RemoteBuilder, builderSpecs, type BuilderSpec, type EnsureOptions } from '../remote-builder.js';
import { BuilderHealth, type BuilderState } from './health.js';
import { placementKey, placementOrder } from './placement.js';
import { createProbe, type Probe } from './probe.js';

/** Milliseconds a probe may take. */
export const PROBE_TIMEOUT_MS = 3000;

export type FleetConfig = Pick<
  Config,
  'childEnv' | 'dockerConfigDir' | 'builderName' | 'builderEndpoints' | 'builderTls' | 'build'
>;

interface Member {
  readonly spec: BuilderSpec;
  readonly remote: RemoteBuilder;
  inFlight: number;
}

export interface FleetOptions {
  readonly config: FleetConfig;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  readonly metrics: BuilderMetrics;
  readonly groups?: ProcessGroups;
  /** The health probe (default: HTTP/2 PING with the fleet's TLS settings). */
  readonly probe?: Probe;
}

export class BuilderFleet {
  readonly #members: Member[];
  readonly #limit: number;
  readonly #metrics: BuilderMetrics;
  readonly health: BuilderHealth;

  constructor(options: FleetOptions) {
    const { config } = options;
    this.#limit = config.build.maxPerBuilder;
    this.#metrics = options.metrics;
    this.#members = builderSpecs(config).map((spec) => ({
      spec,
      remote: new RemoteBuilder(config, spec, options.groups),
      inFlight: 0,
    }));
    const endpoints = config.builderEndpoints;
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

  /** Each builder's state, in the order configured. */
  states(): (BuilderState & { inFlight: number })[] {
    return this.health.states().map((state, i) => ({ ...state, inFlight: this.#members[i]?.inFlight ?? 0 }));
  }

  /**
   * Places a build of `repository`/`branch` and takes a place on its builder (synchronously), or
   * throws BUILDERS_FULL (429) when every healthy builder is full. Undefined without builders.
   */
  place(repository: string, branch: string | undefined): Placement | undefined {
    if (this.#members.length === 0) return undefined;
    const order = this.#order(repository, branch);
    const member = this.#firstWithRoom(order);
    if (member === undefined) {
      throw buildersFull(this.#limit, RETRY_AFTER.default);
    }
    return new Placement(this, order, member);
  }

  #order(repository: string, branch: string | undefined): Member[] {
    const endpoints = placementOrder(
      placementKey(repository, branch),
      this.#members.map((m) => m.spec.endpoint),
    );
    return endpoints.map((endpoint) => this.#members.find((m) => m.spec.endpoint === endpoint) as Member);
  }

  /** The first healthy builder with room; with none healthy, the first with room (it may be back). */
  #firstWithRoom(order: readonly Member[], except?: Member): Member | undefined {
    const room = (m: Member): boolean => m !== except && (this.#limit === 0 || m.inFlight < this.#limit);
    const healthy = order.filter((m) => this.health.isUp(m.spec.endpoint));
    if (except !== undefined) return healthy.find(room);
    return healthy.length > 0 ? healthy.find(room) : order.find(room);
  }

  /** Internal to Placement: the next builder for a build leaving `from`. */
  next(order: readonly Member[], from: Member): Member | undefined {
    return this.#firstWithRoom(order, from);
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

/** One build's place in the fleet: the builder it uses (BuildDeps.remoteBuilder), until it finishes. */
export class Placement {
  readonly #fleet: BuilderFleet;
  readonly #order: readonly Member[];
  #member: Member;
  #finished = false;
  /** Called when the build moves to another builder (its record follows). */
  onMove: ((endpoint: string) => void) | undefined;

  constructor(fleet: BuilderFleet, order: readonly Member[], member: Member) {
    this.#fleet = fleet;
    this.#order = order;
    this.#member = member;
    fleet.take(member);
  }

  get endpoint(): string {
    return this.#member.spec.endpoint;
  }

  get configured(): boolean {
    return true;
  }

  get name(): string {
    return this.#member.spec.name;
  }

  /**
   * Before the build's first step: the builder answers, or it is marked down and the build moves to
   * the next healthy builder with room (one img log line naming both); none left fails the build.
   */
  async ensure(options: EnsureOptions): Promise<void> {
    for (;;) {
      const from = this.#member.spec.endpoint;
      const reason = await this.#fleet.health.check(from);
      if (reason === undefined) break;
      const next = this.#fleet.next(this.#order, this.#member);
      if (next === undefined) {
        options.log.write(`# builder ${from} unreachable: ${reason}; no other builder can take the build\n`);
        throw stepFailed('image build', options.log.id, reason);
      }
      options.log.write(
        `# builder ${from} unreachable (${reason}): building on ${next.spec.endpoint} instead\n`,
      );
      this.#fleet.release(this.#member);
      this.#fleet.take(next);
      this.#member = next;
      this.onMove?.(next.spec.endpoint);
    }
    await this.#member.remote.ensure(options);
  }

  /** The build ended (once): its place is free and it is counted on its builder. */
  finish(status: BuildStatus): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#fleet.release(this.#member, status);
  }
}
