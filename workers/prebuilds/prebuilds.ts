/**
 * The prebuilds (docs/prebuilds.md): a signed push, a reconcile or a refresh only selects among
 * the configured repositories and branches; each decision is a delivery with its reason. Latest
 * push wins: a pushed head cancels the branch's prebuild in flight (a schedule's head leaves it).
 * A successful prebuild moves the branch tag; a failed one leaves it on the last good image.
 */
import type { BuildRecord } from '../../src/builds/types.js';
import type { PrebuildConfiguration } from '../../src/config/types.js';
import { publicReasonOf } from '../../src/errors/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import { branchKey, isZeroCommit, repositoryKey } from '../../src/prebuilds/names.js';
import { matchesAny } from '../../src/rules/globs.js';
import type { Delivery, Forge, NewDelivery, PrebuildTrigger, PushEvent } from '../../src/prebuilds/types.js';
import { moveBranchTag } from './branch-tag.js';
import type { RegistryAccess } from '../../src/registry/call.js';
import { changedPaths } from './changed-paths.js';
import { prebuildPlan } from './plan.js';
import type { PrebuildDeps } from './ports.js';
import { BranchSlots, type Slot } from './slots.js';
import { ImageTarget } from '../../src/rules/image-target.js';

/** One head to consider building. */
export interface Candidate {
  readonly index: number;
  readonly branch: string;
  /** The commit the paths filter compares with (absent or zeros: every path changed). */
  readonly before?: string;
  readonly after: string;
  readonly trigger: PrebuildTrigger;
  readonly forge?: Forge;
  readonly deliveryId?: string;
  /** The reason of a build started (default `built <id>`). */
  readonly builtReason?: (id: string) => string;
}

interface Tracked {
  readonly index: number;
  readonly branch: string;
}

/** Told of each successful prebuild (the refresh records the digests it was built from). */
export type SucceededListener = (index: number, branch: string, commit: string) => Promise<void>;

const tagOf = (image: string): string | undefined => /:([^:/@]+)$/.exec(image)?.[1];

export class Prebuilds {
  readonly #deps: PrebuildDeps;
  readonly #slots = new BranchSlots();
  readonly #tracked = new Map<string, Tracked>();
  /** Decisions on one branch happen one at a time, in arrival order. */
  readonly #turns = new Map<string, Promise<unknown>>();
  readonly #succeeded: SucceededListener[] = [];

  constructor(deps: PrebuildDeps) {
    this.#deps = deps;
  }

  get configurations(): readonly PrebuildConfiguration[] {
    return this.#deps.config.prebuilds.configurations;
  }

  get tagAccess(): RegistryAccess {
    const { config, registry } = this.#deps;
    return {
      client: registry,
      insecureRegistries: config.insecureRegistries,
      registryAuth: config.registryAuth,
    };
  }

  onSucceeded(listener: SucceededListener): void {
    this.#succeeded.push(listener);
  }

  deliveries(): Promise<Delivery[]> {
    return this.#deps.deliveries.list();
  }

  async record(delivery: NewDelivery): Promise<Delivery> {
    this.#deps.metrics.prebuildTriggersTotal.inc({ trigger: delivery.trigger, decision: delivery.decision });
    return this.#deps.deliveries.add(delivery);
  }

  refuse(forge: Forge, reason: string): Promise<Delivery> {
    return this.record({ trigger: 'push', forge, decision: 'refused', reason });
  }

  /** A signed push: the configurations of its repository and branch decide; the first decision answers. */
  async push(event: PushEvent, logger: Logger): Promise<Delivery> {
    const origin = {
      trigger: 'push' as const,
      forge: event.forge,
      ...(event.deliveryId ? { deliveryId: event.deliveryId } : {}),
    };
    const keys = new Set(event.repositoryUrls.map(repositoryKey).filter((k) => k !== undefined));
    const repos = this.configurations
      .map((c, index) => ({ c, index }))
      .filter(({ c }) => keys.has(repositoryKey(c.repository) ?? ''));
    if (repos.length === 0)
      return this.record({ ...origin, decision: 'ignored', reason: 'ignored: repository not configured' });
    const repository = repos[0]?.c.repository;
    if (!event.ref.startsWith('refs/heads/'))
      return this.record({ ...origin, repository, decision: 'ignored', reason: 'ignored: not a branch' });
    const branch = event.ref.slice('refs/heads/'.length);
    const matching = repos.filter(({ c }) => matchesAny(branch, c.branches));
    if (matching.length === 0)
      return this.record({
        ...origin,
        repository,
        branch,
        decision: 'ignored',
        reason: 'ignored: branch not configured',
      });
    if (isZeroCommit(event.after))
      return this.#deleted(
        matching.map((m) => m.index),
        { ...origin, repository, branch },
      );
    const decisions = await Promise.all(
      matching.map(({ index }) =>
        this.consider({ ...origin, index, branch, before: event.before, after: event.after }, logger),
      ),
    );
    return decisions.find((d) => d.decision === 'built') ?? (decisions[0] as Delivery);
  }

  /** A deleted branch builds nothing; its prebuild in flight is cancelled. */
  async #deleted(indexes: number[], origin: Omit<NewDelivery, 'decision' | 'reason'>): Promise<Delivery> {
    for (const index of indexes) {
      const slot = this.#slots.get(branchKey(index, origin.branch ?? ''));
      if (slot !== undefined) await this.#deps.builds.cancel(slot.buildId, 'branch deleted');
    }
    return this.record({ ...origin, decision: 'ignored', reason: 'ignored: branch deleted' });
  }

  /** Decides on one head, after the decisions on its branch before it. */
  consider(candidate: Candidate, logger: Logger): Promise<Delivery> {
    const key = branchKey(candidate.index, candidate.branch);
    const previous = this.#turns.get(key) ?? Promise.resolve();
    const turn = previous.catch(() => undefined).then(() => this.#decide(candidate, logger));
    this.#turns.set(key, turn);
    void turn.finally(() => {
      if (this.#turns.get(key) === turn) this.#turns.delete(key);
    });
    return turn;
  }

  async #decide(candidate: Candidate, logger: Logger): Promise<Delivery> {
    const configuration = this.configurations[candidate.index] as PrebuildConfiguration;
    const base: NewDelivery = {
      trigger: candidate.trigger,
      ...(candidate.forge === undefined ? {} : { forge: candidate.forge }),
      ...(candidate.deliveryId === undefined ? {} : { deliveryId: candidate.deliveryId }),
      repository: configuration.repository,
      branch: candidate.branch,
      commit: candidate.after,
      decision: 'ignored',
      reason: '',
    };
    const inFlight = await this.#inFlight(branchKey(candidate.index, candidate.branch));
    if (inFlight?.commit === candidate.after)
      return this.record({ ...base, reason: `ignored: ${candidate.after} is already building` });
    // Only a push supersedes: a schedule's head may be older than the push that started the
    // prebuild in flight (read before it), and what it would build is built anyway.
    if (inFlight !== undefined && candidate.trigger !== 'push')
      return this.record({ ...base, reason: `ignored: a prebuild of ${inFlight.commit} is in flight` });
    try {
      const plan = prebuildPlan(configuration, candidate.branch, this.#deps.config);
      if (!(await this.#pathsChanged(configuration, plan, candidate)))
        return this.record({ ...base, reason: 'ignored: no change under paths' });
      return await this.#start(candidate, plan, base, logger);
    } catch (err) {
      logger.warn(
        { err, repository: configuration.repository, branch: candidate.branch },
        'prebuild not started',
      );
      const reason = publicReasonOf(err, 'internal error');
      return this.record({ ...base, decision: 'failed', reason: `failed: ${reason}` });
    }
  }

  /**
   * The branch's prebuild in flight: the slot's build, unless it ended on another replica (Redis
   * mode: only the replica that runs a build is told of its end), which frees the slot. One record
   * read while a slot is held (a store away: the slot stands).
   */
  async #inFlight(key: string): Promise<Slot | undefined> {
    const slot = this.#slots.get(key);
    if (slot === undefined || !(await this.#deps.builds.ended(slot.buildId).catch(() => false))) return slot;
    this.#slots.end(slot.buildId);
    this.#tracked.delete(slot.buildId);
    return undefined;
  }

  async #pathsChanged(
    configuration: PrebuildConfiguration,
    plan: ReturnType<typeof prebuildPlan>,
    candidate: Candidate,
  ): Promise<boolean> {
    const { paths } = configuration;
    if (paths === undefined || candidate.before === undefined || isZeroCommit(candidate.before)) return true;
    const changed = await changedPaths(
      plan,
      { config: this.#deps.config, groups: this.#deps.groups },
      { before: candidate.before, after: candidate.after },
      AbortSignal.timeout(120_000),
    );
    return changed === undefined || changed.some((path) => matchesAny(path, paths));
  }

  async #start(
    candidate: Candidate,
    plan: ReturnType<typeof prebuildPlan>,
    base: NewDelivery,
    logger: Logger,
  ): Promise<Delivery> {
    const key = branchKey(candidate.index, candidate.branch);
    const current = this.#slots.get(key);
    if (current !== undefined) {
      await this.#deps.builds.cancel(current.buildId, `superseded by ${candidate.after}`);
      await this.#deps.deliveries.update(current.deliveryId, {
        decision: 'superseded',
        reason: `superseded by ${candidate.after}`,
      });
      this.#deps.metrics.prebuildTriggersTotal.inc({ trigger: candidate.trigger, decision: 'superseded' });
    }
    const { id } = await this.#deps.builds.start(plan, { trigger: candidate.trigger, logger });
    const reason = candidate.builtReason?.(id) ?? `built ${id}`;
    const delivery = await this.record({ ...base, decision: 'built', reason, buildId: id });
    this.#tracked.set(id, { index: candidate.index, branch: candidate.branch });
    this.#slots.take(key, { buildId: id, commit: candidate.after, deliveryId: delivery.id });
    logger.info(
      { buildId: id, repository: base.repository, branch: candidate.branch, trigger: candidate.trigger },
      'prebuild started',
    );
    return delivery;
  }

  /**
   * The prebuild `record` is of: one this instance started, or (Redis mode) one another replica
   * started and this one ran, found by its trigger, repository, image name and branch. O(configurations).
   */
  #trackedOf(record: BuildRecord): Tracked | undefined {
    const tracked = this.#tracked.get(record.id);
    if (tracked !== undefined || record.trigger === undefined || record.trigger === 'api') return tracked;
    const { branch } = record;
    if (branch === undefined) return undefined;
    const index = this.configurations.findIndex(
      (configuration) =>
        configuration.repository === record.repository &&
        record.image.startsWith(`${ImageTarget.of(configuration.image).repository}:`),
    );
    return index < 0 ? undefined : { index, branch };
  }

  /**
   * The build-ended listener, on the instance that ran the build: a successful prebuild moves its
   * branch tag; a failed one leaves it.
   */
  readonly ended = async (record: BuildRecord): Promise<void> => {
    const tracked = this.#trackedOf(record);
    if (tracked === undefined) return;
    this.#tracked.delete(record.id);
    this.#slots.end(record.id);
    const configuration = this.configurations[tracked.index] as PrebuildConfiguration;
    const fields = { buildId: record.id, repository: configuration.repository, branch: tracked.branch };
    const tag = tagOf(record.image);
    if (record.status !== 'success' || tag === undefined || record.commit === undefined) {
      this.#deps.logger.info(
        { ...fields, status: record.status },
        'prebuild did not succeed: branch tag left as it was',
      );
      return;
    }
    const moved = await moveBranchTag(this.tagAccess, configuration.image, tag, tracked.branch);
    this.#deps.logger.info({ ...fields, image: record.image, branchTag: moved }, 'branch tag moved');
    for (const listener of this.#succeeded) await listener(tracked.index, tracked.branch, record.commit);
  };
}
