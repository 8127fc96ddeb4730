import type { Config } from '../config/types.js';
import { noopErrorTracker, type ErrorTracker } from './error-tracking.js';

/** Error tracking with the Sentry SDK when a DSN is configured. (Stub: the deployment issue fills it in.) */
export function createErrorTracker(_config: Config): ErrorTracker {
  return noopErrorTracker;
}
