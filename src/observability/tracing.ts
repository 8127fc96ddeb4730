/**
 * OpenTelemetry tracing, started once the configuration is loaded: off unless the standard variable
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (docs/operations.md); the
 * service's name and environment are the configuration's (`--service-name`, `--environment`). Spans: one SERVER span per HTTP request (`traceRequests()`), `withSpan()`
 * around the clone, the build and each registry call; log lines carry the active ids
 * (`currentTraceIds()`). Without a started provider every call here goes to the no-op API.
 */
import {
  context,
  isSpanContextValid,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import type { Middleware } from 'koa';
import {
  ATTR_DEPLOYMENT_ENVIRONMENT_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
} from './semconv.js';
import type { TracingSettings } from './tracing-sdk.js';
import type { Config } from '../config/types.js';

/** What the spans say of the service: the configuration's name and environment. */
export type TracedService = Pick<Config['observability'], 'serviceName' | 'environment'>;
const TRACER_NAME = 'image-build-service';
/** The request's id (X-Request-Id, given or generated) on its SERVER span (the service's own name). */
const ATTR_REQUEST_ID = 'request.id';

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/**
 * What tracing would export to, from the OpenTelemetry variables of `env` and the configured
 * `service` (pure; OTEL_SERVICE_NAME, when set, names the service). `undefined` means tracing
 * stays off: neither endpoint variable is set, or OTEL_SDK_DISABLED=true.
 */
export function tracingSettings(
  env: NodeJS.ProcessEnv,
  service: TracedService,
  version: string,
): TracingSettings | undefined {
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined;
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  // The signal-specific variable is used as is; the base one gets the signal path appended.
  const url = tracesEndpoint ?? (baseEndpoint && `${baseEndpoint.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined) return undefined;
  const resource: Record<string, string> = {
    [ATTR_SERVICE_NAME]: nonEmpty(env.OTEL_SERVICE_NAME) ?? service.serviceName,
    [ATTR_SERVICE_VERSION]: version,
    [ATTR_DEPLOYMENT_ENVIRONMENT_NAME]: service.environment,
  };
  const delay = Number(nonEmpty(env.OTEL_BSP_SCHEDULE_DELAY));
  return Number.isInteger(delay) && delay > 0
    ? { url, resource, scheduledDelayMillis: delay }
    : { url, resource };
}

/**
 * Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. The
 * SDK (tracing-sdk.ts) is imported only then: without an endpoint nothing beyond the API is loaded.
 */
export async function startTracing(
  env: NodeJS.ProcessEnv,
  service: TracedService,
  version: string,
): Promise<{ shutdown(): Promise<void> }> {
  const settings = tracingSettings(env, service, version);
  if (settings === undefined) return { shutdown: async () => undefined };
  const { startTracerProvider } = await import('./tracing-sdk.js');
  return startTracerProvider(settings);
}

/** Runs `fn` inside a span named `name` (ended when it settles, error recorded). */
export async function withSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: () => Promise<T>,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      // Only the error's type and code: messages may quote command lines or URLs.
      const code = (err as { code?: unknown }).code;
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : undefined });
      span.setAttribute('error.type', typeof code === 'string' ? code : ((err as Error).name ?? 'Error'));
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Koa middleware: one SERVER span per request, continuing an incoming `traceparent`. Attributes:
 * method, route template, path, final status and the request id that `requestId` reads once the
 * request is handled (query strings and headers are never recorded). Mounted first so every later
 * middleware, the request log line included, runs inside the span.
 */
export function traceRequests(
  options: { requestId?: (koaCtx: Parameters<Middleware>[0]) => string | undefined } = {},
): Middleware {
  const tracer = trace.getTracer(TRACER_NAME);
  return async (koaCtx, next) => {
    const parent = propagation.extract(context.active(), koaCtx.headers);
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: koaCtx.method,
      [ATTR_URL_PATH]: koaCtx.path,
    };
    const span = tracer.startSpan(koaCtx.method, { kind: SpanKind.SERVER, attributes }, parent);
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (koaCtx as { _matchedRoute?: unknown })._matchedRoute;
      if (typeof route === 'string') {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${koaCtx.method} ${route}`);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, koaCtx.status);
      const requestId = options.requestId?.(koaCtx);
      if (requestId !== undefined) span.setAttribute(ATTR_REQUEST_ID, requestId);
      if (koaCtx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/** `trace_id` and `span_id` of the active span, for log lines (empty outside a recorded span). */
export function currentTraceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
