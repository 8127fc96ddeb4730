// The real service process (src/main.ts), configured only through its environment, sends the
// spans of a real request (with the clone as a child span) to a local OTLP receiver and the 5xx
// to a local envelope receiver: tracing starts before configuration loads, as src/service.ts wires it.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startOtlpReceiver, type OtlpReceiver } from '../../../helpers/otlp-receiver.js';
import { startSentryReceiver, type SentryReceiver } from '../../../helpers/sentry-receiver.js';

const MAIN = join(import.meta.dirname, '..', '..', '..', '..', 'src', 'main.ts');
const TOKEN = 'process-test-token-4242';

let otlp: OtlpReceiver;
let sentry: SentryReceiver;
let child: ChildProcess;
let url: string;
let home: string;
const lines: Record<string, unknown>[] = [];

test.before(async () => {
  otlp = await startOtlpReceiver();
  sentry = await startSentryReceiver();
  home = await mkdtemp(join(tmpdir(), 'ibs-process-'));
  child = spawn(process.execPath, ['--import=tsx', MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: home,
      PORT: '0',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'otel-named-builder',
      SERVICE_NAME: 'service-named-builder',
      DEPLOYMENT_ENVIRONMENT: 'process-test',
      ERROR_TRACKING_DSN: sentry.dsn,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.msg === 'listening') resolve(entry.port as number);
    });
  });
  url = `http://127.0.0.1:${port}`;
});

/** SIGTERM, then the exit awaited (SIGKILL after 15 s): a service left running keeps the worker alive. */
async function stopService(): Promise<void> {
  const service = child as ChildProcess | undefined;
  if (service === undefined || service.exitCode !== null || service.signalCode !== null) return;
  const exited = new Promise((resolve) => service.once('exit', resolve));
  service.kill('SIGTERM');
  const kill = setTimeout(() => service.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(kill);
}

test.after.always(async () => {
  // The service flushes its spans and events on the way out: the receivers close after it.
  await stopService();
  await otlp?.close();
  await sentry?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

test('a failing build request: request span, clone child span, 5xx event, trace ids in the logs', async (t) => {
  const res = await fetch(`${url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repository: 'https://127.0.0.1:1/org/unreachable.git',
      image: { registry: '127.0.0.1:1', name: 'org/unreachable' },
      gitCredentials: { username: 'someone', token: TOKEN },
    }),
  });
  t.is(res.status, 500);

  const request = await otlp.waitForSpan((s) => s.name === 'POST /build');
  t.is(request.resource['service.name'], 'otel-named-builder');
  t.is(request.resource['deployment.environment.name'], 'process-test');
  const version = String(lines.find((l) => l.msg === 'listening')?.version);
  t.is(request.resource['service.version'], version);
  t.is(request.attributes['http.response.status_code'], 500);
  const clone = await otlp.waitForSpan((s) => s.name === 'git.clone');
  t.is(clone.traceId, request.traceId);
  t.is(clone.parentSpanId, request.spanId);
  t.is(clone.attributes['git.host'], '127.0.0.1');
  t.is(clone.statusCode, 2);

  const event = await sentry.waitForEvent((e) => e.tags?.route === '/build');
  t.is(event.environment, 'process-test');
  t.is(event.release, version);
  t.is(event.tags?.code, 'COMMAND_FAILED');

  const logged = lines.find((l) => l.msg === 'request' && (l.req as { path?: string }).path === '/build');
  t.is(logged?.trace_id, request.traceId);
  for (const raw of [otlp.rawText(), sentry.rawText(), JSON.stringify(lines)]) t.false(raw.includes(TOKEN));
});
