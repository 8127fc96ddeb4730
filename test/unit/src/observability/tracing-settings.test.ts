// tracingSettings (pure): when tracing is on, where it exports, and the resource it declares: the
// configured service name and environment (OTEL_SERVICE_NAME, when set, names the service).
import test from 'ava';
import { tracingSettings, type TracedService } from '../../../../src/observability/tracing.js';

/** The configuration's defaults (`--service-name`, `--environment`). */
const DEFAULTS: TracedService = { serviceName: 'service-builder', environment: 'development' };

const cases: {
  title: string;
  env: Record<string, string>;
  service?: TracedService;
  url?: string;
  resource?: Record<string, string>;
  delay?: number;
}[] = [
  { title: 'off when no endpoint variable is set', env: {} },
  { title: 'off when the endpoint is empty', env: { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' } },
  {
    title: 'off when OTEL_SDK_DISABLED=true',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' },
  },
  {
    title: "base endpoint gets /v1/traces; the configuration's defaults name the service",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
    url: 'http://collector:4318/v1/traces',
    resource: {
      'service.name': 'service-builder',
      'service.version': '0.3.0',
      'deployment.environment.name': 'development',
    },
  },
  {
    title: 'the traces endpoint is used as is and wins over the base one',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
    },
    url: 'http://traces:4318/custom',
    resource: {
      'service.name': 'service-builder',
      'service.version': '0.3.0',
      'deployment.environment.name': 'development',
    },
  },
  {
    title: 'the configured service name and environment reach the spans when OTEL_SERVICE_NAME is unset',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: '' },
    service: { serviceName: 'builder-a', environment: 'staging' },
    url: 'http://c:4318/v1/traces',
    resource: {
      'service.name': 'builder-a',
      'service.version': '0.3.0',
      'deployment.environment.name': 'staging',
    },
  },
  {
    title: 'OTEL_SERVICE_NAME wins over the configured name; OTEL_BSP_SCHEDULE_DELAY is honoured',
    env: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces',
      OTEL_SERVICE_NAME: 'otel-name',
      OTEL_BSP_SCHEDULE_DELAY: '250',
    },
    service: { serviceName: 'builder-a', environment: 'staging' },
    url: 'http://c:4318/v1/traces',
    resource: {
      'service.name': 'otel-name',
      'service.version': '0.3.0',
      'deployment.environment.name': 'staging',
    },
    delay: 250,
  },
];

for (const c of cases) {
  test(c.title, (t) => {
    const settings = tracingSettings(c.env, c.service ?? DEFAULTS, '0.3.0');
    if (c.url === undefined) {
      t.is(settings, undefined);
      return;
    }
    t.is(settings?.url, c.url);
    t.deepEqual(settings?.resource, c.resource);
    t.is(settings?.scheduledDelayMillis, c.delay);
  });
}
