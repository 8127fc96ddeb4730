/**
 * OpenTelemetry tracing, bootstrapped from the standard OTLP exporter variables before
 * configuration loads. (Stub: the deployment issue fills it in; the signatures stay.)
 */

/** Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. */
export function startTracing(_env: NodeJS.ProcessEnv, _version: string): { shutdown(): Promise<void> } {
  return { shutdown: async () => undefined };
}

/** Runs `fn` inside a span named `name` (ended when it settles, error recorded). */
export async function withSpan<T>(
  _name: string,
  _attributes: Record<string, string | number | boolean>,
  fn: () => Promise<T>,
): Promise<T> {
  return fn();
}
