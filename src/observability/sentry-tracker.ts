/**
 * Error tracking with the Sentry SDK (loaded by error-tracking.ts only when `errorTracking.dsn` is
 * set, so that a service without it never loads the SDK): 5xx answers (the app's
 * error middleware reports them) and crashes (uncaught exceptions, unhandled rejections) only.
 * Kept light: no default integrations (no HTTP, console or request-body capture, no tracing),
 * no breadcrumbs, no PII, and every event is scrubbed of credentials before it is sent.
 */
import {
  captureException,
  dedupeIntegration,
  flush,
  init,
  linkedErrorsIntegration,
  onUncaughtExceptionIntegration,
  onUnhandledRejectionIntegration,
  withScope,
} from '@sentry/node';
import type { Config } from '../config/types.js';
import { configSecrets, secretVariants } from '../secrets/masking.js';
import type { ErrorTracker } from './error-tracker.js';
import { scrubEvent } from '../secrets/scrub-event.js';

/** Starts the Sentry SDK for `dsn` and returns the tracker that reports through it. */
export function createSentryTracker(config: Config, dsn: string): ErrorTracker {
  const secrets = secretVariants(configSecrets(config));
  init({
    dsn,
    release: config.version,
    environment: config.observability.environment,
    defaultIntegrations: false,
    integrations: [
      linkedErrorsIntegration(),
      dedupeIntegration(),
      onUncaughtExceptionIntegration(),
      onUnhandledRejectionIntegration(),
    ],
    // Collect nothing about users, cookies, headers, query strings, bodies or local variables.
    dataCollection: {
      userInfo: false,
      cookies: false,
      httpHeaders: false,
      httpBodies: [],
      urlQueryParams: false,
      stackFrameVariables: false,
      frameContextLines: 0,
    },
    sendClientReports: false,
    maxBreadcrumbs: 0,
    beforeBreadcrumb: () => null,
    beforeSend: (event) => scrubEvent(event, secrets),
    initialScope: { tags: { 'service.name': config.observability.serviceName } },
  });
  return {
    captureException(error, context) {
      withScope((scope) => {
        if (context !== undefined) {
          for (const [key, value] of Object.entries(context)) {
            if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
              scope.setTag(key, value);
            }
          }
        }
        captureException(error);
      });
    },
    flush: async (timeoutMs) => {
      await flush(timeoutMs);
    },
  };
}
