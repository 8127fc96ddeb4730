/**
 * Recording a build in the registry, for the route that runs it: the reporter the build job
 * receives is the registry bound to one build. Recording is best effort: a registry that fails
 * (a shared store unreachable) is logged, never fails the build. Progress is sent in order without
 * holding up the build (a shared registry costs a round trip per update); the finish waits for it.
 */
import { retryAfterDelays } from '../errors/retry.js';
import type { Logger } from '../observability/logger.js';
import type {
  BuildDetails,
  BuildOutcome,
  BuildRegistry,
  BuildReporter,
  BuildUpdate,
  NewBuild,
} from './types.js';

function buildReporter(
  registry: Pick<BuildRegistry, 'update'>,
  buildId: string,
  logger: Pick<Logger, 'warn'>,
): BuildReporter & { sent(): Promise<void> } {
  /** The updates reported so far, each sent once the one before has been answered. */
  let queue: Promise<void> = Promise.resolve();
  /** Every detail reported so far: an update carries them whole. */
  let details: BuildDetails = {};
  const report = async (update: BuildUpdate): Promise<void> => {
    queue = queue.then(async () => {
      try {
        await registry.update(buildId, update);
      } catch (err) {
        logger.warn({ err, buildId }, 'could not record build progress');
      }
    });
  };
  return {
    phase: (phase) => report({ phase }),
    logOpened: (kind, logId) =>
      report(kind === 'git' ? { gitCloneLogId: logId } : { imageBuildLogId: logId }),
    resolved: ({ branch, commit, image }) => report({ branch, commit, image }),
    details: (more) => {
      details = { ...details, ...more };
      return report({ details });
    },
    builder: (endpoint, builders) =>
      report({ builder: endpoint, ...(builders === undefined ? {} : { builders: [...builders] }) }),
    sent: () => queue,
  };
}

/** One build's record in the registry, as the route that runs it holds it. */
export interface BuildRecording {
  /** The record's id (undefined when the registry could not record it). */
  readonly id: string | undefined;
  readonly reporter: BuildReporter;
  /** Records how the build ended (best effort, like the reporter). */
  finish(outcome: BuildOutcome): Promise<void>;
}

/** The waits before each new try to record a build's outcome (about half a minute in all). */
const FINISH_RETRIES_MS = [500, 1000, 2000, 4000, 8000, 16_000];

/** Starts recording a build just admitted; a registry that fails is logged and the build runs unrecorded. */
export async function recordBuild(
  registry: Pick<BuildRegistry, 'start' | 'update' | 'finish'>,
  build: NewBuild,
  logger: Pick<Logger, 'warn'>,
): Promise<BuildRecording> {
  let buildId: string;
  try {
    buildId = await registry.start(build);
  } catch (err) {
    logger.warn({ err }, 'could not record build');
    return { id: undefined, reporter: unrecorded, finish: async () => undefined };
  }
  return recordingOf(registry, buildId, logger);
}

/** The recording of the build `buildId`, recorded before (a queued build taken to run, or ended unstarted). */
export function recordingOf(
  registry: Pick<BuildRegistry, 'update' | 'finish'>,
  buildId: string,
  logger: Pick<Logger, 'warn'>,
): BuildRecording {
  const reporter = buildReporter(registry, buildId, logger);
  return {
    id: buildId,
    reporter,
    finish: async (outcome) => {
      // After the progress reported before it (an update after the finish would be ignored).
      await reporter.sent();
      // Tried again over half a minute: a store restarting (Redis) must not turn an answered
      // build into a lost one.
      try {
        await retryAfterDelays(() => registry.finish(buildId, outcome), { delaysMs: FINISH_RETRIES_MS });
      } catch (err) {
        logger.warn({ err, buildId }, 'could not record build outcome');
      }
    },
  };
}

const unrecorded: BuildReporter = {
  phase: async () => undefined,
  logOpened: async () => undefined,
  builder: async () => undefined,
  resolved: async () => undefined,
  details: async () => undefined,
};
