import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../../src/http/app.js';
import type { BuildRegistry } from '../../src/builds/types.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import type { AppContext } from '../../src/http/context.js';
import { ProcessGroups } from '../../src/exec/process-groups.js';
import { noopErrorTracker, type ErrorTracker } from '../../src/observability/error-tracker.js';
import { createLogger } from '../../src/observability/logger.js';
import { createContext } from '../../src/context.js';
import { createStores } from '../../src/stores.js';
import type { BuildWorkerOptions } from '../../workers/build-worker.js';

/** Options of the app a test starts (tests inject a fake job runner or queue into the worker). */
export interface AppOptions {
  build?: BuildWorkerOptions;
}

/** Config's sections: a test sets some of their fields, the others keep the service's defaults. */
const SECTIONS = [
  'service',
  'git',
  'build',
  'logs',
  'observability',
  'errorTracking',
  'redis',
  'retention',
  'events',
  'prebuilds',
  'auth',
] as const;
type Section = (typeof SECTIONS)[number];

/**
 * What a test sets of Config: whole top-level fields, a section's fields one by one, and as a
 * shorthand `builderEndpoints`: builders that declare no platform (`builders` given whole win).
 */
export type ConfigOverrides = Partial<Omit<Config, Section>> & {
  readonly [S in Section]?: Partial<Config[S]>;
} & { readonly builderEndpoints?: readonly string[] };

/**
 * A complete configuration: the service's own defaults (the real loader with no flag, no setting
 * and an empty docker config, port 0), then the test's overrides.
 */
export function testConfig(overrides: ConfigOverrides & { scratchDir: string }): Config {
  const defaults = loadConfig({
    argv: [],
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: overrides.scratchDir,
      DOCKER_CONFIG: join(overrides.scratchDir, 'docker-config'),
      DEPLOYMENT_ENVIRONMENT: 'test',
    },
  });
  const { builderEndpoints, ...rest } = overrides;
  const withPort: ConfigOverrides = {
    ...rest,
    // Builders given whole (with their platforms) win over the shorthand.
    ...(builderEndpoints === undefined || rest.builders !== undefined
      ? {}
      : { builders: builderEndpoints.map((endpoint) => ({ endpoint, platforms: [] })) }),
    service: { port: 0, ...overrides.service },
  };
  const sections = Object.fromEntries(
    SECTIONS.map((name) => [name, { ...defaults[name], ...withPort[name] }]),
  );
  return Object.freeze({ ...defaults, ...withPort, ...sections } as Config);
}

export interface RunningApp {
  url: string;
  ctx: AppContext;
  /** Every JSON line the service logged so far. */
  logLines: () => Record<string, unknown>[];
  /** Raw text the service logged so far. */
  logText: () => string;
  close: () => Promise<void>;
}

/** The test file that starts an app, named in its scratch dir: a leftover then names its test. */
function callerName(): string {
  const file = /test\/(?:integration|unit)\/([\w/.-]+?)\.test\.ts/.exec(new Error('caller').stack ?? '')?.[1];
  return file === undefined ? 'app' : file.replaceAll('/', '-');
}

/** Starts the real app on 127.0.0.1:0 with its own scratch dir; close() stops it and removes the scratch dir. */
export async function startApp(
  overrides: ConfigOverrides = {},
  options: { errorTracker?: ErrorTracker; app?: AppOptions; builds?: BuildRegistry } = {},
): Promise<RunningApp> {
  const scratchDir = overrides.scratchDir ?? (await mkdtemp(join(tmpdir(), `ibs-test-${callerName()}-`)));
  const config = testConfig({ ...overrides, scratchDir });
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString('utf8');
      cb();
    },
  });
  const abort = new AbortController();
  const logger = createLogger({
    serviceName: config.observability.serviceName,
    environment: config.observability.environment,
    destination,
  });
  // Embedded, or Redis mode when the overrides set redis.url (as src/service.ts does).
  const stores = await createStores(config, logger);
  const { ctx, events, stopSchedules } = createContext({
    config,
    logger,
    errorTracker: options.errorTracker ?? noopErrorTracker,
    stores,
    processGroups: new ProcessGroups(),
    shutdownSignal: abort.signal,
    ...(options.builds === undefined ? {} : { builds: options.builds }),
    ...(options.app?.build === undefined ? {} : { worker: options.app.build }),
  });
  const server = createApp(ctx).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ctx,
    logText: () => text,
    logLines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    close: async () => {
      // The abort cancels each running build (and closes retention's client); their clean-up and
      // the scheduled passes in flight end before the scratch dir goes.
      abort.abort();
      await Promise.all([ctx.buildWorker.drained?.(), stopSchedules()]);
      await events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stores.close();
      if (overrides.scratchDir === undefined)
        await rm(scratchDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}
