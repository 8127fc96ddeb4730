/** What reports 5xx answers and crashes (error-tracking.ts picks Sentry or the no-op). */
export interface ErrorTracker {
  captureException(error: unknown, context?: Record<string, unknown>): void;
  flush(timeoutMs: number): Promise<void>;
}

export const noopErrorTracker: ErrorTracker = {
  captureException: () => undefined,
  flush: async () => undefined,
};
