/** Error tracking (5xx and crashes only). The no-op tracker is used when no DSN is configured. */
import type { Config } from '../config/types.js';
import { noopErrorTracker, type ErrorTracker } from './error-tracker.js';

/**
 * The Sentry tracker when `errorTracking.dsn` is set, the no-op tracker otherwise. The SDK (about
 * 40 MiB resident) is imported here, on demand: a service without a DSN never loads it.
 */
export async function createErrorTracker(config: Config): Promise<ErrorTracker> {
  const dsn = config.errorTracking.dsn;
  if (dsn === undefined || dsn === '') return noopErrorTracker;
  const { createSentryTracker } = await import('./sentry-tracker.js');
  return createSentryTracker(config, dsn);
}
