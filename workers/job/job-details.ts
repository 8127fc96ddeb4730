/**
 * What a running job tells its build's record as it goes (docs/ui.md), besides its laps
 * (workers/stages/laps.ts): BuildKit's steps read from the img log, the key and why it was
 * rebuilt, the pushed image's sizes, and each log it opens.
 */
import type { BuildReporter } from '../../src/builds/types.js';
import type { CommandLogWriter, LogStore } from '../../src/logs/types.js';
import { maskSecrets, secretVariants } from '../../src/secrets/masking.js';
import { keyView, rebuiltBecause } from './build-details.js';
import type { StepTracker } from '../builder/buildkit-steps.js';
import type { Cloned } from './job.js';
import type { Decision } from '../reuse/decision.js';
import { registryAccess } from '../reuse/reuse-deps.js';
import { reasonOf } from '../../src/errors/errors.js';
import { pushedImage } from '../reuse/reuse-image.js';
/** The pushed image's platforms and sizes into the record (a failure is only logged). */
export async function reportPushed(job: Cloned, digest: string, log: CommandLogWriter): Promise<void> {
  try {
    await job.reporter.details({
      pushed: await pushedImage(job.target, registryAccess(job.plan, job.deps), digest),
    });
  } catch (err) {
    log.write(`# the sizes of ${digest} could not be read (${reasonOf(err)})\n`);
  }
}

/** The build key and its inputs into the record; for a build that runs, why it was not reused. */
export async function reportKey(job: Cloned, decision: Decision): Promise<void> {
  if (decision.keyed === undefined) return;
  const { key, input } = decision.keyed;
  await job.reporter.details({
    key: keyView(key, input),
    ...(decision.kind === 'build' ? { rebuiltBecause: rebuiltBecause(decision.changed) } : {}),
  });
}

/** `log`, whose every piece is also read by `steps` (BuildKit's progress in it). */
export function tappedLog(log: CommandLogWriter, steps: StepTracker): CommandLogWriter {
  const decoder = new TextDecoder();
  return {
    id: log.id,
    write: (chunk) => {
      steps.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      log.write(chunk);
    },
    addSecrets: (secrets) => log.addSecrets(secrets),
    close: () => log.close(),
  };
}

/**
 * The build's BuildKit steps into its record and service_build_steps_total, the request's secrets
 * masked (the server's own never reach a Dockerfile step).
 */
export async function reportSteps(job: Cloned, tracker: StepTracker): Promise<void> {
  const variants = secretVariants(job.plan.secrets);
  const mask = (text: string): string => maskSecrets(text, variants);
  const steps = tracker.steps().map((step) => ({
    ...step,
    name: mask(step.name),
    ...(step.stage === undefined ? {} : { stage: mask(step.stage) }),
    ...(step.error === undefined ? {} : { error: mask(step.error) }),
  }));
  const cached = steps.filter((step) => step.cached).length;
  job.deps.metrics.buildStepsTotal.inc({ cached: 'true' }, cached);
  job.deps.metrics.buildStepsTotal.inc({ cached: 'false' }, steps.length - cached);
  await job.reporter.details({ steps, cachedSteps: cached, totalSteps: steps.length });
}

/** The log store, reporting the id of each log it opens. */
export function reportingLogStore(logStore: LogStore, reporter: BuildReporter): LogStore {
  return {
    read: (id) => logStore.read(id),
    follow: (id, signal) => logStore.follow(id, signal),
    remove: (id) => logStore.remove(id),
    open: async (kind, secrets) => {
      const log = await logStore.open(kind, secrets);
      await reporter.logOpened(kind, log.id);
      return log;
    },
  };
}
