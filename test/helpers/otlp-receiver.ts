// A local OTLP/HTTP (JSON) traces receiver: `POST /v1/traces`, keeps every span it gets.
import { eventually } from './eventually.js';
import { listen } from './http-listener.js';

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  statusCode: number;
  resource: Record<string, string | number | boolean>;
}

function flatten(attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

export interface OtlpReceiver {
  /** Base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: () => ReceivedSpan[];
  /** Every raw export body received (to search for secrets). */
  rawText: () => string;
  waitForSpan: (match: (span: ReceivedSpan) => boolean, timeoutMs?: number) => Promise<ReceivedSpan>;
  close: () => Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let raw = '';
  const listener = await listen(({ method, path, headers, body }) => {
    if (method !== 'POST' || path !== '/v1/traces') return { status: 404, body: '{}' };
    if (!String(headers['content-type'] ?? '').includes('json')) return { status: 415, body: '{}' };
    const text = body.toString('utf8');
    raw += text + '\n';
    const parsed = JSON.parse(text) as OtlpExport;
    for (const rs of parsed.resourceSpans ?? []) {
      const resource = flatten(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          spans.push({
            name: span.name,
            traceId: span.traceId,
            spanId: span.spanId,
            ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
            kind: span.kind,
            attributes: flatten(span.attributes),
            statusCode: span.status?.code ?? 0,
            resource,
          });
        }
      }
    }
    return { status: 200, body: '{}' };
  });
  return {
    endpoint: listener.origin,
    spans: () => [...spans],
    rawText: () => raw,
    waitForSpan: (match, timeoutMs = 30_000) =>
      eventually(() => spans.find(match), { timeout: timeoutMs, interval: 50, what: 'a matching span' }),
    close: listener.close,
  };
}
