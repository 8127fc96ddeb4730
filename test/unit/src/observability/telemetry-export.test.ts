// Traces and error-tracking events of real requests reach local receivers (OTLP/HTTP and a
// Sentry-compatible envelope endpoint) through the real exporters, with the right attributes
// and without secrets. One tracer provider per process: the tests of this file run serially.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ServiceError } from '../../../../src/errors/errors.js';
import { createErrorTracker } from '../../../../src/observability/error-tracking.js';
import { startTracing, withSpan } from '../../../../src/observability/tracing.js';
import { MASK } from '../../../../src/secrets/masking.js';
import { startApp, testConfig, type RunningApp } from '../../../helpers/app.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../../helpers/otlp-receiver.js';
import { startSentryReceiver, type SentryReceiver } from '../../../helpers/sentry-receiver.js';

const SERVER_TOKEN = 'server-side-git-token-5f1e';
const REQUEST_TOKEN = 'request-git-token-77ab';
const REQUEST_PASSWORD = 'request-registry-password-c3d4';
const HEADER_PASSWORD = 'header-registry-password-9e9e';
const BEARER = 'bearer-value-0a0b0c';
const SECRETS = [SERVER_TOKEN, REQUEST_TOKEN, REQUEST_PASSWORD, HEADER_PASSWORD, BEARER];

let otlp: OtlpReceiver;
let sentry: SentryReceiver;
let app: RunningApp;
let tracing: { shutdown(): Promise<void> };
let scratch: string;

test.before(async () => {
  otlp = await startOtlpReceiver();
  sentry = await startSentryReceiver();
  tracing = await startTracing(
    { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
    { serviceName: 'ibs-under-test', environment: 'ci' },
    '1.2.3',
  );
  scratch = await mkdtemp(join(tmpdir(), 'ibs-telemetry-'));
  const overrides = {
    errorTracking: { dsn: sentry.dsn },
    observability: { environment: 'ci' },
    version: '1.2.3',
    gitCredentials: [{ host: 'git.example', kind: 'https' as const, username: 'svc', token: SERVER_TOKEN }],
  };
  const errorTracker = await createErrorTracker(testConfig({ scratchDir: scratch, ...overrides }));
  app = await startApp(overrides, { errorTracker });
});

test.after.always(async () => {
  await app?.close();
  await tracing?.shutdown();
  await otlp?.close();
  await sentry?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function flushAll(): Promise<void> {
  await app.ctx.errorTracker.flush(5000);
}

test.serial(
  'a request gets a SERVER span continuing the caller trace, and its log line carries the ids',
  async (t) => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const res = await fetch(`${app.url}/health/startup`, {
      headers: { traceparent: `00-${traceId}-${parentId}-01`, 'x-request-id': 'ci-job-7:step.2' },
    });
    t.is(res.status, 200);
    const span = await otlp.waitForSpan((s) => s.attributes['http.route'] === '/health/startup');
    t.is(span.name, 'GET /health/startup');
    t.is(span.kind, 2);
    t.is(span.traceId, traceId);
    t.is(span.parentSpanId, parentId);
    t.is(span.attributes['http.request.method'], 'GET');
    t.is(span.attributes['http.response.status_code'], 200);
    t.is(span.attributes['request.id'], 'ci-job-7:step.2');
    t.is(span.statusCode, 0);
    t.is(span.resource['service.name'], 'ibs-under-test');
    t.is(span.resource['service.version'], '1.2.3');
    t.is(span.resource['deployment.environment.name'], 'ci');
    const line = app
      .logLines()
      .find((l) => l.msg === 'request' && (l.req as { path?: string }).path === '/health/startup');
    t.is(line?.trace_id, traceId);
    t.is(line?.span_id, span.spanId);
    t.is(line?.requestId, 'ci-job-7:step.2');
  },
);

test.serial('a 4xx answer is traced with its status but never sent to error tracking', async (t) => {
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-registry-password': HEADER_PASSWORD },
    body: '{"repository": ',
  });
  t.is(res.status, 400);
  const span = await otlp.waitForSpan(
    (s) => s.attributes['url.path'] === '/build' && s.attributes['http.response.status_code'] === 400,
  );
  t.is(span.attributes['http.request.method'], 'POST');
  await flushAll();
  t.deepEqual(sentry.events(), []);
});

test.serial('a 5xx answer reaches error tracking with release, environment and no credentials', async (t) => {
  const res = await fetch(`${app.url}/build`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-registry-password': HEADER_PASSWORD,
      authorization: `Bearer ${BEARER}`,
    },
    body: JSON.stringify({
      repository: 'https://127.0.0.1:1/org/unreachable.git',
      image: { registry: '127.0.0.1:1', name: 'org/unreachable', tag: 't1' },
      gitCredentials: { username: 'someone', token: REQUEST_TOKEN },
      registryCredentials: { registry: '127.0.0.1:1', username: 'someone', password: REQUEST_PASSWORD },
    }),
  });
  t.true(res.status >= 500, `expected a 5xx, got ${res.status}`);
  await flushAll();
  const event = await sentry.waitForEvent((e) => e.tags?.route === '/build');
  t.is(event.release, '1.2.3');
  t.is(event.environment, 'ci');
  t.is(event.tags?.method, 'POST');
  t.is(event.tags?.['service.name'], 'service-builder');
  t.truthy(event.exception?.values?.length);
  const span = await otlp.waitForSpan(
    (s) => s.attributes['url.path'] === '/build' && Number(s.attributes['http.response.status_code']) >= 500,
  );
  t.is(span.statusCode, 2);
  t.is(span.name, 'POST /build');
  for (const secret of SECRETS) t.false(sentry.rawText().includes(secret), `event leaks ${secret}`);
});

test.serial(
  'captured errors are scrubbed of URL credentials, bearer values and configured secrets',
  async (t) => {
    const error = new Error(
      `clone of https://someone:${REQUEST_TOKEN}@git.example/x.git failed; Authorization: Bearer ${BEARER}; token ${SERVER_TOKEN}`,
    );
    app.ctx.errorTracker.captureException(error, {
      code: 'INTERNAL',
      route: '/scrub',
      password: REQUEST_PASSWORD,
    });
    await flushAll();
    const event = await sentry.waitForEvent((e) => e.tags?.route === '/scrub');
    const message = event.exception?.values?.[0]?.value ?? '';
    t.true(message.includes(`https://${MASK}@git.example/x.git`), message);
    t.true(message.includes(`Bearer ${MASK}`), message);
    t.is(event.tags?.password, MASK);
    t.is(event.breadcrumbs, undefined);
    for (const secret of SECRETS) t.false(sentry.rawText().includes(secret), `event leaks ${secret}`);
  },
);

test.serial('withSpan records a child span, and a failure as an error with its code only', async (t) => {
  await withSpan(
    'registry.manifest',
    { 'registry.host': '127.0.0.1:5000', 'image.tag': 'v1' },
    async () => 'ok',
  );
  await t.throwsAsync(
    withSpan('test.failing-step', { 'git.host': 'git.example' }, async () => {
      throw new ServiceError('COMMAND_FAILED', `git clone https://u:${REQUEST_TOKEN}@x exited with code 128`);
    }),
  );
  const ok = await otlp.waitForSpan((s) => s.name === 'registry.manifest');
  t.is(ok.attributes['registry.host'], '127.0.0.1:5000');
  t.is(ok.statusCode, 0);
  const failed = await otlp.waitForSpan((s) => s.name === 'test.failing-step');
  t.is(failed.statusCode, 2);
  t.is(failed.attributes['error.type'], 'COMMAND_FAILED');
  for (const secret of SECRETS) t.false(otlp.rawText().includes(secret), `spans leak ${secret}`);
});

test.serial('a crash (uncaught exception) is reported, scrubbed, before the process exits', async (t) => {
  const fixture = join(import.meta.dirname, '..', '..', '..', 'helpers', 'crash-process.ts');
  const run = promisify(execFile)(process.execPath, ['--import=tsx', fixture, sentry.dsn], {
    timeout: 60_000,
  });
  const outcome = await run.then(
    () => 'exit 0',
    (err: { code?: number }) => `exit ${err.code}`,
  );
  t.not(outcome, 'exit 0');
  const event = await sentry.waitForEvent((e) => e.environment === 'crash-test');
  t.is(event.release, '9.9.9');
  t.is(event.exception?.values?.[0]?.mechanism?.type, 'auto.node.onuncaughtexception');
  t.false(sentry.rawText().includes('crash-secret-pass'));
  t.false(sentry.rawText().includes('crash-bearer-token'));
});
