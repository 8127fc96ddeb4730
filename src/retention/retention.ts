/**
 * Image retention (docs/retention.md): the plan of every known repository (GET /retention/plan),
 * a run that carries it out in delete mode (POST /retention/run, or the schedule), one run at a
 * time (the store's lock), and the "served" marks the routes and the build worker record.
 */
import type { BuildRecord } from '../builds/types.js';
import type { DockerConfigDocument, RetentionSettings } from '../config/types.js';
import { DELETE_ACTIONS, PULL, type RegistryCall, RegistryClient } from '../registry/client.js';
import { registryCall } from '../registry/call.js';
import { reasonOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, RetentionRunResult } from '../observability/metrics.js';
import { executePlan, type ImageRun, type StepOutcome } from './executor.js';
import { planRepository, type RepositoryPlan } from './policy.js';
import { type RepositoryAnswer, type RetentionAnswer, planAnswer, runAnswer } from './answer.js';
import { type Repository, repositoryOfEntry, type ServedStore } from './served.js';
import { readSnapshot } from './snapshot.js';
import { servedTag } from './snapshot-types.js';
import { ImageTarget } from '../rules/image-target.js';

export interface RetentionDeps {
  readonly settings: RetentionSettings;
  readonly insecureRegistries: readonly string[];
  readonly registryAuth: DockerConfigDocument;
  readonly store: ServedStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly client?: RegistryClient;
}

/** An image a run deleted, as its listeners are told (the events' image.deleted). */
interface DeletedImageNotice {
  readonly registry: string;
  readonly name: string;
  readonly digest: string;
  readonly tag: string;
  /** Why the policy deleted it (the plan's reason). */
  readonly reason: string;
}

/** Awaited once per deleted image, after its last step; a failure is logged, never stops the run. */
export type ImageDeletedListener = (deleted: DeletedImageNotice) => Promise<void>;

export class Retention {
  readonly client: RegistryClient;
  readonly #deletedListeners: ImageDeletedListener[] = [];

  constructor(private readonly deps: RetentionDeps) {
    this.client = deps.client ?? new RegistryClient({ insecureRegistries: deps.insecureRegistries });
  }

  get mode(): RetentionSettings['mode'] {
    return this.deps.settings.mode;
  }

  /** Records refs of `repository` as served now; a store failure is logged, never thrown. */
  served(repository: Repository, refs: readonly string[]): void {
    this.deps.store.mark(repository, refs).catch((err: unknown) => {
      this.deps.logger.warn(
        { err, repository: repository.repository },
        'retention: could not record an image as served',
      );
    });
  }

  /** The build-ended listener: what a build answered (a build or a reuse) counts as served now. */
  readonly servedOnAnswer = async (record: BuildRecord): Promise<void> => {
    const body = record.answer?.status === 200 ? record.answer.body : undefined;
    const { registry, name, digest, tag } = body ?? {};
    if (typeof registry !== 'string' || typeof name !== 'string' || typeof digest !== 'string') return;
    this.served(
      new ImageTarget(registry, name),
      typeof tag === 'string' ? [digest, servedTag(tag)] : [digest],
    );
  };

  /** Adds a listener told of every image a run deletes (the events' image.deleted). */
  onImageDeleted(listener: ImageDeletedListener): void {
    this.#deletedListeners.push(listener);
  }

  private async tellDeleted(repository: Repository, runs: readonly ImageRun[]): Promise<void> {
    const { registry, name } = repository;
    for (const { planned } of runs.filter((run) => run.outcome === 'deleted')) {
      const { digest, tag } = planned.image;
      const notice = { registry, name, digest, tag, reason: planned.reason };
      for (const listener of this.#deletedListeners) {
        await listener(notice).catch((err: unknown) => {
          this.deps.logger.warn(
            { err, repository: repository.repository, digest },
            'retention: a deletion listener failed',
          );
        });
      }
    }
  }

  /**
   * Every repository, once by `<registry>/<name>`: those builds were answered for and those the
   * settings list. Of two namings of one repository, the one whose registry keeps a namespace path.
   */
  private async repositories(): Promise<Repository[]> {
    const known = await this.deps.store.repositories();
    const byName = new Map<string, Repository>();
    for (const repository of [...known, ...this.deps.settings.repositories.map(repositoryOfEntry)]) {
      const seen = byName.get(repository.repository);
      if (seen === undefined || seen.registry.length < repository.registry.length)
        byName.set(repository.repository, repository);
    }
    return [...byName.keys()].sort().map((name) => byName.get(name) as Repository);
  }

  private callFor(repository: Repository, actions: readonly string[]): RegistryCall {
    return registryCall(
      this.deps,
      { registry: repository.registry, name: repository.name, tag: 'latest' },
      actions,
    );
  }

  private async planOne(repository: Repository, call: RegistryCall, nowMs: number): Promise<RepositoryPlan> {
    const [snapshot, served] = await Promise.all([
      readSnapshot(this.client, call, repository.repository),
      this.deps.store.servedTimes(repository.repository),
    ]);
    return planRepository(snapshot, this.deps.settings, served, nowMs);
  }

  /** What a run would do now, without doing it. */
  async plan(): Promise<RetentionAnswer> {
    const nowMs = Date.now();
    const repositories = await Promise.all(
      (await this.repositories()).map(async (repository): Promise<RepositoryAnswer> => {
        try {
          return planAnswer(await this.planOne(repository, this.callFor(repository, PULL), nowMs));
        } catch (err) {
          return { repository: repository.repository, error: reasonOf(err), images: [] };
        }
      }),
    );
    return { mode: this.mode, policy: this.policyView(), at: new Date(nowMs).toISOString(), repositories };
  }

  private policyView(): Record<string, unknown> {
    const { keepPerBranch, keepServedDays, keepTags } = this.deps.settings;
    return { keepPerBranch, keepServedDays, keepTags: [...keepTags] };
  }

  /** Runs the plan now (one run at a time across replicas): undefined when another run holds the lock. */
  async run(): Promise<RetentionAnswer | undefined> {
    let answer: RetentionAnswer | undefined;
    const ran = await this.deps.store.exclusive(async () => {
      answer = await this.runLocked();
    });
    if (!ran) this.deps.metrics.retentionRunsTotal.inc({ result: 'skipped' });
    return ran ? answer : undefined;
  }

  private async runLocked(): Promise<RetentionAnswer> {
    const nowMs = Date.now();
    let result: RetentionRunResult = 'success';
    const repositories: RepositoryAnswer[] = [];
    for (const repository of await this.repositories()) {
      try {
        const call = this.callFor(repository, DELETE_ACTIONS);
        const plan = await this.planOne(repository, call, nowMs);
        const runs = await executePlan(this.client, call, plan, (step) =>
          this.logStep(repository.repository, step),
        );
        if (runs.some((r) => r.outcome === 'error')) result = 'error';
        await this.tellDeleted(repository, runs);
        this.countImages(runs);
        repositories.push(runAnswer(plan, runs));
      } catch (err) {
        result = 'error';
        const named = repository.repository;
        this.deps.logger.warn({ repository: named, err: reasonOf(err) }, 'retention: repository not read');
        repositories.push({ repository: named, error: reasonOf(err), images: [] });
      }
    }
    this.deps.metrics.retentionRunsTotal.inc({ result });
    return { mode: this.mode, policy: this.policyView(), at: new Date(nowMs).toISOString(), repositories };
  }

  private countImages(runs: readonly ImageRun[]): void {
    for (const run of runs) this.deps.metrics.retentionImagesTotal.inc({ action: run.outcome });
  }

  private logStep(repository: string, outcome: StepOutcome): void {
    const { step, result, detail } = outcome;
    const fields = { repository, reference: step.reference, action: step.action, result };
    if (result === 'error') this.deps.logger.warn({ ...fields, error: detail }, 'retention: delete failed');
    else
      this.deps.logger.info(
        fields,
        step.action === 'move' ? 'retention: build key moved' : 'retention: deleted',
      );
  }

  /** The scheduled run of dry-run mode: the plan, logged (one line per repository), nothing deleted. */
  async dryRun(): Promise<void> {
    const ran = await this.deps.store.exclusive(async () => {
      const plan = await this.plan();
      for (const repo of plan.repositories) {
        const deleting = repo.images.filter((i) => i.action === 'delete');
        this.deps.logger.info(
          {
            repository: repo.repository,
            ...(repo.error === undefined ? {} : { error: repo.error }),
            wouldDelete: deleting.map((i) => ({ tag: i.tag, reason: i.reason, references: i.references })),
            kept: repo.images.length - deleting.length,
          },
          'retention dry run: plan',
        );
      }
    });
    this.deps.metrics.retentionRunsTotal.inc({ result: ran ? 'dry_run' : 'skipped' });
  }
}
