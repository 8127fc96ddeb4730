/**
 * The Retry-After of a 429: the soonest expected end among the running builds. A running
 * build is expected to take the median of the latest successful builds of its repository, or of
 * any repository when its own has none; the answer is clamped to the bounds, and is the default
 * when no running build has any history to go by. busyRetryAfter reads them from the build registry.
 */
import type { BuildRegistry } from '../../src/builds/types.js';
import type { Logger } from '../../src/observability/logger.js';

export const RETRY_AFTER = { min: 5, max: 300, default: 30 } as const;
/** How many of the latest successful durations count (per repository, or overall). */
const RETRY_AFTER_SAMPLE = 10;

export interface RunningBuild {
  readonly repository: string;
  readonly elapsedSeconds: number;
}

export interface FinishedBuild {
  readonly repository: string;
  readonly durationSeconds: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * `running`: the builds holding the slots. `succeeded`: recent successful builds, newest first.
 * Returns whole seconds within RETRY_AFTER.min..max.
 */
export function estimateRetryAfter(
  running: readonly RunningBuild[],
  succeeded: readonly FinishedBuild[],
): number {
  const overall = succeeded.slice(0, RETRY_AFTER_SAMPLE).map((b) => b.durationSeconds);
  let soonest: number | undefined;
  for (const build of running) {
    const own = succeeded
      .filter((b) => b.repository === build.repository)
      .slice(0, RETRY_AFTER_SAMPLE)
      .map((b) => b.durationSeconds);
    const sample = own.length > 0 ? own : overall;
    if (sample.length === 0) continue;
    const remaining = median(sample) - build.elapsedSeconds;
    soonest = soonest === undefined ? remaining : Math.min(soonest, remaining);
  }
  if (soonest === undefined) return RETRY_AFTER.default;
  return Math.min(RETRY_AFTER.max, Math.max(RETRY_AFTER.min, Math.ceil(soonest)));
}

/** The Retry-After of a 429 from what the build registry knows (the default when it cannot say). */
export async function busyRetryAfter(
  registry: Pick<BuildRegistry, 'list'>,
  logger: Pick<Logger, 'warn'>,
): Promise<number> {
  try {
    // The slots' builds (a page holds them all), and the newest successful ones.
    const [{ builds: running }, { builds: succeeded }] = await Promise.all([
      registry.list({ status: 'running' }, { limit: 500 }),
      registry.list({ status: 'success' }, { limit: 100 }),
    ]);
    return estimateRetryAfter(
      running,
      succeeded.map((succeededBuild) => ({
        repository: succeededBuild.repository,
        durationSeconds: succeededBuild.durationSeconds ?? succeededBuild.elapsedSeconds,
      })),
    );
  } catch (err) {
    logger.warn({ err }, 'could not estimate Retry-After');
    return RETRY_AFTER.default;
  }
}
