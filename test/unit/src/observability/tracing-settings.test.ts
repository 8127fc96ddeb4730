// tracingSettings (pure): when tracing is on, where it exports, and the resource it declares.
import test from 'ava';
import { tracingSettings } from '../../../../src/observability/tracing.js';

const cases: {
  title: string;
  env: Record<string, string>;
  url?: string;
  resource?: Record<string, string>;
  delay?: number;
}[] = [
  {
    title: 'off when no endpoint variable is set',
    env: { SERVICE_NAME: 'x', DEPLOYMENT_ENVIRONMENT: 'prod' },
  },
  { title: 'off when the endpoint is empty', env: { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' } },
  {
    title: 'off when OTEL_SDK_DISABLED=true',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' },
  },
  {
    title: 'base endpoint gets /v1/traces, defaults to service-builder',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' },
    url: 'http://collector:4318/v1/traces',
    resource: { 'service.name': 'service-builder', 'service.version': '0.3.0' },
  },
  {
    title: 'the traces endpoint is used as is and wins over the base one',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
    },
    url: 'http://traces:4318/custom',
    resource: { 'service.name': 'service-builder', 'service.version': '0.3.0' },
  },
  {
    title: 'SERVICE_NAME names the service when OTEL_SERVICE_NAME is unset',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', SERVICE_NAME: 'builder-a', OTEL_SERVICE_NAME: '' },
    url: 'http://c:4318/v1/traces',
    resource: { 'service.name': 'builder-a', 'service.version': '0.3.0' },
  },
  {
    title: 'OTEL_SERVICE_NAME wins over SERVICE_NAME; DEPLOYMENT_ENVIRONMENT is declared',
    env: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces',
      SERVICE_NAME: 'builder-a',
      OTEL_SERVICE_NAME: 'otel-name',
      DEPLOYMENT_ENVIRONMENT: 'staging',
    },
    url: 'http://c:4318/v1/traces',
    resource: {
      'service.name': 'otel-name',
      'service.version': '0.3.0',
      'deployment.environment.name': 'staging',
    },
  },
  {
    title: 'an empty DEPLOYMENT_ENVIRONMENT means unset; OTEL_BSP_SCHEDULE_DELAY is honoured',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      DEPLOYMENT_ENVIRONMENT: '',
      OTEL_BSP_SCHEDULE_DELAY: '250',
    },
    url: 'http://c:4318/v1/traces',
    resource: { 'service.name': 'service-builder', 'service.version': '0.3.0' },
    delay: 250,
  },
];

for (const c of cases) {
  test(c.title, (t) => {
    const settings = tracingSettings(c.env, '0.3.0');
    if (c.url === undefined) {
      t.is(settings, undefined);
      return;
    }
    t.is(settings?.url, c.url);
    t.deepEqual(settings?.resource, c.resource);
    t.is(settings?.scheduledDelayMillis, c.delay);
  });
}
