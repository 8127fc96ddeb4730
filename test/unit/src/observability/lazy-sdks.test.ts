// The real service process loads the OpenTelemetry SDK and the Sentry SDK only when they are
// configured (they cost about 40 MiB of resident memory): a module-resolution hook records every
// module the process resolves, without and with the configuration.
import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService } from '../../../helpers/service-process.js';

const SDKS = ['/node_modules/@sentry/node/', '/node_modules/@opentelemetry/sdk-trace-node/'];

const dataUrl = (source: string): string => `data:text/javascript,${encodeURIComponent(source)}`;
/** Appends every resolved module URL to the file named by IBS_LOAD_LOG. */
const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.IBS_LOAD_LOG, result.url + '\\n');
  return result;
}`;
const recorder = dataUrl(
  `import { register } from 'node:module'; register(${JSON.stringify(dataUrl(hooks))});`,
);

async function modulesLoaded(env: Record<string, string>): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-lazy-'));
  const log = join(dir, 'modules.txt');
  const service = spawnService(['--port', '0'], {
    ...env,
    NODE_OPTIONS: `--import=${recorder}`,
    IBS_LOAD_LOG: log,
  });
  try {
    await service.waitForLog('listening');
    return (await readFile(log, 'utf8')).split('\n');
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await rm(dir, { recursive: true, force: true });
  }
}

test('without a DSN or an OTLP endpoint, neither SDK is loaded', async (t) => {
  const modules = await modulesLoaded({});
  t.true(
    modules.some((url) => url.includes('/node_modules/koa/')),
    'the recorder sees package modules',
  );
  for (const sdk of SDKS)
    t.false(
      modules.some((url) => url.includes(sdk)),
      `${sdk} was loaded`,
    );
});

test('with a DSN and an OTLP endpoint, both SDKs are loaded', async (t) => {
  const modules = await modulesLoaded({
    ERROR_TRACKING_DSN: 'http://public@127.0.0.1:9/1',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
  });
  for (const sdk of SDKS)
    t.true(
      modules.some((url) => url.includes(sdk)),
      `${sdk} was not loaded`,
    );
});
