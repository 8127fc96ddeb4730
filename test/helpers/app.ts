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
import { Metrics } from '../../src/observability/metrics.js';
import { createStores } from '../../src/stores.js';
import { EventService } from '../../src/events/events.js';
import { Retention } from '../../src/retention/retention.js';
import { BuildWorker, type BuildWorkerOptions } from '../../workers/build-worker.js';
import { createPrebuilds } from '../../workers/prebuilds-start.js';

/** Options of the app a test starts (tests inject a fake job runner or queue into the worker). */
export interface AppOptions {
  build?: BuildWorkerOptions;
}

/**
 * A complete configuration: the service's own defaults (the real loader with no flag, no setting
 * and an empty docker config), then the test's overrides.
 */
export function testConfig(overrides: Partial<Config> & { scratchDir: string }): Config {
  const defaults = loadConfig({
    argv: [],
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: overrides.scratchDir,
      DOCKER_CONFIG: join(overrides.scratchDir, 'docker-config'),
      DEPLOYMENT_ENVIRONMENT: 'test',
    },
  });
  return Object.freeze({ ...defaults, port: 0, ...overrides });
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

/** Starts the real app on 127.0.0.1:0 with its own scratch dir; close() stops it and removes the scratch dir. */
export async function startApp(
  overrides: Partial<Config> = {},
  options: { errorTracker?: ErrorTracker; app?: AppOptions; builds?: BuildRegistry } = {},
): Promise<RunningApp> {
  const scratchDir = overrides.scratchDir ?? (await mkdtemp(join(tmpdir(), 'ibs-test-')));
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
    serviceName: config.serviceName,
    environment: config.environment,
    destination,
  });
  // Embedded, or Redis mode when the overrides set redisUrl (as src/service.ts does).
  const stores = await createStores(config, logger);
  const metrics = new Metrics();
  const retention = new Retention({
    ...config,
    settings: config.retention,
    store: stores.served,
    metrics,
    logger,
  });
  const shared = {
    config,
    logger,
    metrics,
    retention,
    logStore: stores.logStore,
    builds: options.builds ?? stores.builds,
    leases: stores.leases,
    secretIdentityKey: stores.secretIdentityKey,
    processGroups: new ProcessGroups(),
    shutdownSignal: abort.signal,
  };
  const events = new EventService({
    config,
    ...stores.events,
    metrics: shared.metrics.events,
    logger,
    shutdownSignal: abort.signal,
  }).start();
  const buildWorker = new BuildWorker(
    { ...shared, reuseSourceServed: (repository, digest) => retention.served(repository, [digest]) },
    options.app?.build,
  );
  // Each build's end: its events recorded, what it answered counted as served (docs/events.md).
  buildWorker.onBuildEnded(events.onBuildEnded);
  buildWorker.onBuildEnded(retention.servedOnAnswer);
  // Each image a retention run deletes: an image.deleted event.
  retention.onImageDeleted(events.emitImageDeleted);
  const ctx: AppContext = {
    ...shared,
    events,
    ...(stores.sharedStoreProbe === undefined ? {} : { sharedStoreProbe: stores.sharedStoreProbe }),
    errorTracker: options.errorTracker ?? noopErrorTracker,
    buildWorker,
    prebuilds: createPrebuilds(shared, buildWorker, stores.scheduleLock),
  };
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
      abort.abort();
      retention.client.close();
      await events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stores.close();
      // A prebuild pass or an event append may still be ending in it: retry as Node's rm does.
      if (overrides.scratchDir === undefined)
        await rm(scratchDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}
