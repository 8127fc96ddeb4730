/**
 * The OpenTelemetry SDK half of tracing: a tracer provider exporting over OTLP/HTTP. Imported by
 * tracing.ts only when an endpoint is configured, so that a service without one never loads it.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** What tracing exports to (tracing.ts reads it from the environment). */
export interface TracingSettings {
  /** Full OTLP/HTTP traces URL (`.../v1/traces`). */
  readonly url: string;
  readonly resource: Readonly<Record<string, string>>;
  /** OTEL_BSP_SCHEDULE_DELAY (ms between batch exports) when set to a positive integer. */
  readonly scheduledDelayMillis?: number;
}

/** Registers a global tracer provider for `settings`; `shutdown` flushes it and unregisters it. */
export function startTracerProvider(settings: TracingSettings): { shutdown(): Promise<void> } {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes(settings.resource),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), {
        scheduledDelayMillis: settings.scheduledDelayMillis,
      }),
    ],
  });
  // Installs the async-local-storage context manager and the W3C trace-context propagator.
  provider.register();
  return {
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
