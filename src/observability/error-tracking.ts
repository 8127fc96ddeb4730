/** Error tracking (5xx and crashes only). The no-op tracker is used when no DSN is configured. */
export interface ErrorTracker {
  captureException(error: unknown, context?: Record<string, unknown>): void;
  flush(timeoutMs: number): Promise<void>;
}

export const noopErrorTracker: ErrorTracker = {
  captureException: () => undefined,
  flush: async () => undefined,
};
