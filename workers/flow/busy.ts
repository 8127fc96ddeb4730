/**
 * The 429 of a refused build, made in one place, where admission decides it (admission.ts): every
 * slot here full (BUSY) or every healthy builder full (BUILDERS_FULL), with a Retry-After
 * estimated from the builds in flight, logged once (the answer stage, answer.ts, counts it).
 */
import type { BuildRegistry } from '../../src/builds/types.js';
import type { Config } from '../../src/config/types.js';
import { serviceError } from '../../src/errors/errors.js';
import type { Logger } from '../../src/observability/logger.js';
import { busyRetryAfter } from '../common/retry-after.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { BuildQueue } from '../queue/slots.js';

export interface BusyParts {
  readonly config: Pick<Config, 'build'>;
  readonly builds: BuildRegistry;
  readonly queue: Pick<BuildQueue, 'inFlight' | 'capacity'>;
}

/** The 429 for `plan`: `queueFull` when this instance's slots are full, else its builders. */
export async function busyAnswer(
  parts: BusyParts,
  plan: BuildPlan,
  logger: Logger,
  queueFull: boolean,
): Promise<Error> {
  const retryAfter = await busyRetryAfter(parts.builds, logger);
  logger.warn(
    { repository: plan.repository, inFlight: parts.queue.inFlight, retryAfterSeconds: retryAfter },
    'build refused: busy',
  );
  return queueFull
    ? serviceError('BUSY', { running: parts.queue.capacity }, { retryAfterSeconds: retryAfter })
    : serviceError(
        'BUILDERS_FULL',
        { perBuilder: parts.config.build.maxPerBuilder },
        { retryAfterSeconds: retryAfter },
      );
}
