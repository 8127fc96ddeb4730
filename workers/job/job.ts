/**
 * One build job in its slot (job-flow.ts runs its stages): what every stage reads, and what the
 * job settles when it ends whatever its path: the img log and the key's lease.
 */
import type { BuildReporter } from '../../src/builds/types.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { BuildDeps } from './build-deps.js';
import type { DevcontainerDefinition } from '../builder/definition.js';
import type { PendingCli } from '../builder/pending-cli.js';
import type { OwnedBuild } from '../reuse/in-flight.js';
import type { RequestDir } from '../common/request-dir.js';
import type { ClonedRepository, OpenClone } from '../git/clone.js';
import type { HeldLease } from '../leases/leases.js';
import type { BuildPlan, BuildResult } from '../plan/plan-types.js';
import { isWaitingJob, type Decision, type JobOutcome, type ResultSoFar } from '../reuse/decision.js';
import type { ImageSource } from '../../src/rules/image-labels.js';
import type { TaggedImageTarget } from '../../src/rules/image-target.js';
import type { BuildLaps } from '../stages/laps.js';
/** Reuse for a job: its entry in the in-flight map, and whether it may follow another build. */
export interface JobReuse {
  readonly own: OwnedBuild<BuildResult>;
  readonly followAllowed: boolean;
  /** A line for the top of the img log (why this job builds after waiting for another build). */
  readonly note?: string;
}

/** One job in its slot: what every stage reads. */
export interface Job {
  readonly plan: BuildPlan;
  readonly deps: BuildDeps;
  readonly dir: RequestDir;
  readonly signal: AbortSignal;
  readonly reporter: BuildReporter;
  readonly reuse: JobReuse | undefined;
  /** Whether the build key is computed (reuse on, no noCache). */
  readonly keying: boolean;
  /** The pending CLI, started on the first call. */
  readonly cli: () => PendingCli;
  /** The build's laps: each stage logged, listed in the record, and in the img log's `# stages:` line. */
  readonly laps: BuildLaps;
  /** A line for the img log: why the answered commits did not answer (absent: nothing to say). */
  readonly memoNote?: string;
}

/** A job once cloned. */
export interface Cloned extends Job {
  readonly open: OpenClone;
  readonly target: TaggedImageTarget;
  readonly soFar: ResultSoFar;
  /** Where its image comes from, made once here: the labels of what it builds or reuses. */
  readonly source: ImageSource;
}

/** The read set checked out, and the definition found in it. */
export interface CheckedOut {
  readonly cloned: ClonedRepository;
  readonly definition: DevcontainerDefinition;
}

/**
 * What a job settles when it ends, whatever its path: the img log (opened on first use, the
 * reuse note first; closed, unless handed over with a follow) and the key's lease (released with
 * the image the job answered; with none when it failed or follows another build).
 */
export class JobEnding {
  readonly #job: Cloned;
  #log: CommandLogWriter | undefined;
  #lease: HeldLease | undefined;
  #outcome: JobOutcome | undefined;

  constructor(job: Cloned) {
    this.#job = job;
  }

  /** The img log, opened now if it is not yet. */
  async log(): Promise<CommandLogWriter> {
    if (this.#log !== undefined) return this.#log;
    const { plan, deps, reuse } = this.#job;
    const opened = await deps.logStore.open('img', plan.secrets);
    if (reuse?.note !== undefined) opened.write(reuse.note);
    if (this.#job.memoNote !== undefined) opened.write(this.#job.memoNote);
    this.#log = opened;
    return opened;
  }

  /** A decision: its lease (if any) is now the job's to release. */
  decided(decision: Decision): Decision {
    this.#lease = decision.kind === 'wait' ? undefined : decision.lease;
    return decision;
  }

  /** The job's outcome: a result is what the lease is released with; following keeps the log open. */
  ended(outcome: JobOutcome): JobOutcome {
    this.#outcome = outcome;
    return outcome;
  }

  async close(): Promise<void> {
    const outcome = this.#outcome;
    const built = outcome === undefined || isWaitingJob(outcome) ? undefined : outcome;
    // The builds that follow this one on other replicas learn where its image is (or that it failed).
    await this.#lease?.release(built);
    if (outcome === undefined || !isWaitingJob(outcome)) {
      this.#log?.write(this.#job.laps.line());
      await this.#log?.close();
    }
  }
}
