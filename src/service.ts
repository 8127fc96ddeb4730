/**
 * The service process, started by the entry (main.ts, the package's bin): tracing, configuration,
 * stores, the context (context.ts), the HTTP server, signals. The only place that calls
 * process.exit. The OpenTelemetry and Sentry SDKs are loaded only when configured (startTracing,
 * createErrorTracker): idle memory stays low.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from './http/app.js';
import { parseArgv } from './config/argv.js';
import { builderEndpoints } from './config/builder-endpoints.js';
import { ConfigError } from './config/config-error.js';
import { renderHelp } from './config/help.js';
import { loadConfig } from './config/load.js';
import type { Config } from './config/types.js';
import { packageVersion } from './config/version.js';
import type { AppContext } from './http/context.js';
import { ProcessGroups } from './exec/process-groups.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createErrorTracker } from './observability/error-tracking.js';
import { reasonOf } from './errors/errors.js';
import type { ErrorTracker } from './observability/error-tracker.js';
import { startTracing } from './observability/tracing.js';
import { redisTargetOf, redisView } from './config/redis-target.js';
import { createStores } from './stores.js';
import { createContext } from './context.js';
import { prebuildPlanProblems } from '../workers/prebuilds/plan.js';
import { createShutdown, type ShutdownController } from './shutdown.js';

/** Exit code of a configuration error (before any port is bound). */
const EXIT_CONFIG = 2;
const FLUSH_TIMEOUT_MS = 2000;

const version = packageVersion();
/** Started with the configuration (startReporting); until then nothing to send. */
let tracing: { shutdown(): Promise<void> } = { shutdown: async () => undefined };

async function exitNow(code: number): Promise<never> {
  await tracing.shutdown().catch(() => undefined);
  process.exit(code);
}

/** --help and --version answer and exit; else the configuration, or its error and exit 2. */
async function configOrExit(args: string[]): Promise<Config> {
  const parsed = parseArgv(args);
  if (parsed.help) {
    process.stdout.write(renderHelp(version));
    return exitNow(0);
  }
  if (parsed.version) {
    process.stdout.write(`${version}\n`);
    return exitNow(0);
  }
  try {
    const config = loadConfig({ argv: args, env: process.env });
    const problems = prebuildPlanProblems(config);
    if (problems.length > 0) throw new ConfigError(problems);
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return exitNow(EXIT_CONFIG);
  }
}

interface Reporting {
  readonly logger: Logger;
  readonly errorTracker: ErrorTracker;
  /** Sends what the error tracker and the tracing hold (before the process exits). */
  readonly flush: () => Promise<void>;
}

/** The logger and the error tracker; from now on a crash is logged, reported and flushed. */
async function startReporting(config: Config): Promise<Reporting> {
  tracing = await startTracing(process.env, config.observability, version);
  const logger = createLogger({
    serviceName: config.observability.serviceName,
    environment: config.observability.environment,
  });
  const errorTracker = await createErrorTracker(config);
  const flush = async (): Promise<void> => {
    await errorTracker.flush(FLUSH_TIMEOUT_MS).catch(() => undefined);
    await tracing.shutdown().catch(() => undefined);
  };
  installCrashHandlers(logger, async (err) => {
    errorTracker.captureException(err, { crash: true });
    await flush();
  });
  return { logger, errorTracker, flush };
}

/**
 * The stores of the mode and the context every router reads, its schedules started. With the stop
 * of the schedules, which the drain awaits.
 */
async function startContext(
  config: Config,
  reporting: Reporting,
  shutdownSignal: AbortSignal,
  shuttingDown: () => boolean,
): Promise<{ ctx: AppContext; stopSchedules: () => Promise<void> }> {
  const { logger, errorTracker } = reporting;
  // Redis mode (redis.url or redis.clusterNodes set): stores shared by every replica; else embedded (this instance only).
  const stores = await createStores(config, logger);
  const processGroups = new ProcessGroups().killOnExit(process);
  const { ctx, stopSchedules } = createContext({
    config,
    logger,
    errorTracker,
    stores,
    processGroups,
    shutdownSignal,
    shuttingDown,
  });
  return { ctx, stopSchedules };
}

/** Redis by endpoint (or the cluster's nodes), never a password; false in embedded mode. */
function redisShown(config: Config): ReturnType<typeof redisView> | false {
  const target = redisTargetOf(config.redis);
  return target === undefined ? false : redisView(target);
}

/** What the service says once it listens; a warning when pinned host keys are missing. */
function logListening(server: Server, config: Config, logger: Logger): void {
  const { address, port } = server.address() as AddressInfo;
  logger.info(
    {
      address,
      port,
      version,
      builders: builderEndpoints(config),
      settingsPath: config.settingsPath,
      gitCredentialEntries: config.gitCredentials.length,
      registryMappingRules: config.registryMappingRules.length,
      // By endpoint only: the URL holds a password.
      redis: redisShown(config),
    },
    'listening',
  );
  if (config.sshHostKeyPolicy === 'pinned') {
    const unpinned = config.gitCredentials.filter((e) => e.kind === 'ssh' && e.pinnedHostKey === undefined);
    if (unpinned.length > 0) {
      logger.warn(
        { hosts: unpinned.map((e) => e.host) },
        'ssh host key policy is pinned but these ssh credential entries have no pinnedHostKey: their builds answer 400',
      );
    }
  }
}

/** The app on its port: logged once bound; a port it cannot bind ends the process (exit 1). */
function listen(ctx: AppContext, flush: () => Promise<void>): Server {
  const { config, logger } = ctx;
  const { port, host } = config.service;
  const server = createApp(ctx).listen(port, host);
  server.once('error', (err) => {
    logger.fatal({ err, host, port }, 'cannot listen');
    void flush().then(() => process.exit(1));
  });
  server.once('listening', () => logListening(server, config, logger));
  return server;
}

async function main(): Promise<void> {
  const config = await configOrExit(process.argv.slice(2));
  const reporting = await startReporting(config);
  const abort = new AbortController();
  // Set once the server listens; readiness asks it from the start.
  const lifecycle: { shutdown?: ShutdownController } = {};
  const shuttingDown = (): boolean => lifecycle.shutdown?.stopping === true;
  const { ctx, stopSchedules } = await startContext(config, reporting, abort.signal, shuttingDown);
  const server = listen(ctx, reporting.flush);
  const shutdown = createShutdown({
    server,
    logger: reporting.logger,
    abort,
    graceMs: config.service.shutdownGraceSeconds * 1000,
    // At once: readiness already fails, no queued build starts here any more.
    stopTaking: () => void ctx.buildWorker.stopTaking?.(),
    handBack: () => ctx.buildWorker.handBack?.() ?? Promise.resolve(0),
    // No new scheduled pass once shutting down (the lock goes to another replica); the one in
    // flight and the builds running end first.
    drained: async () => {
      await Promise.all([ctx.buildWorker.drained?.(), stopSchedules()]);
    },
    flush: reporting.flush,
    exit: (code) => process.exit(code),
  });
  lifecycle.shutdown = shutdown;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => shutdown.onSignal(signal));
}

function installCrashHandlers(logger: Logger, report: (err: unknown) => Promise<void>): void {
  const crash = (err: unknown, kind: string): void => {
    logger.fatal({ err, kind }, 'crashed');
    void report(err).finally(() => process.exit(1));
  };
  process.on('uncaughtException', (err) => crash(err, 'uncaughtException'));
  process.on('unhandledRejection', (err) => crash(err, 'unhandledRejection'));
}

main().catch((err: unknown) => {
  process.stderr.write(`startup failed: ${reasonOf(err)}\n`);
  void exitNow(1);
});
