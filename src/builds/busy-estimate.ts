/** The Retry-After of a 429 from what the registry knows (the estimate itself: retry-after.ts). */
import type { Logger } from '../observability/logger.js';
import { estimateRetryAfter, RETRY_AFTER } from './retry-after.js';
import type { BuildRegistry } from './types.js';

export async function busyRetryAfter(
  registry: Pick<BuildRegistry, 'list'>,
  logger: Pick<Logger, 'warn'>,
): Promise<number> {
  try {
    const [running, succeeded] = await Promise.all([
      registry.list({ status: 'running' }),
      registry.list({ status: 'success' }),
    ]);
    return estimateRetryAfter(
      running,
      succeeded.map((b) => ({
        repository: b.repository,
        durationSeconds: b.durationSeconds ?? b.elapsedSeconds,
      })),
    );
  } catch (err) {
    logger.warn({ err }, 'could not estimate Retry-After');
    return RETRY_AFTER.default;
  }
}
