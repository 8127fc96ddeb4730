/**
 * Graceful shutdown: on the first SIGTERM/SIGINT readiness fails first, the replica stops taking
 * queued builds, then the server stops accepting connections; in-flight requests and builds (async
 * ones too) run to completion, then the process exits 0. At the end of the grace period the
 * builds another replica can run go back to the shared queue; then, as on a second signal, the
 * shutdown signal aborts (the exec wrapper kills running commands on it), the killed commands get
 * a moment to end, and the process exits non-zero.
 */
import type { Server } from 'node:http';
import type { Logger } from './observability/logger.js';

/** After the abort, how long killed commands get to end their requests before the process exits. */
const FORCED_EXIT_DELAY_MS = 2000;
/** How long handing builds back to the queue may take before running commands are killed anyway. */
const HAND_BACK_TIMEOUT_MS = 2000;
/** How often idle keep-alive connections are closed while draining. */
const IDLE_SWEEP_MS = 200;

export interface ShutdownOptions {
  readonly server: Server;
  readonly logger: Logger;
  /** Aborted when the process must stop now: running commands are killed. */
  readonly abort: AbortController;
  readonly graceMs: number;
  /** Called at once on the first signal, before the listener closes: no queued build is taken from then on. */
  readonly stopTaking?: () => void;
  /**
   * Called when the grace is over, before running commands are killed: hands the builds another
   * replica can run back to the shared queue; answers how many. Given HAND_BACK_TIMEOUT_MS at most.
   */
  readonly handBack?: () => Promise<number>;
  /** Resolves once no build runs (an async build has no request to wait for); none: nothing to wait for. */
  readonly drained?: () => Promise<void>;
  /** Flushes what must not be lost (error tracker, traces); errors are ignored. */
  readonly flush: () => Promise<void>;
  /** Ends the process (src/service.ts passes process.exit). */
  readonly exit: (code: number) => void;
}

export interface ShutdownController {
  /** Starts the graceful shutdown (first call) or forces it (second call). */
  onSignal(signal: string): void;
  readonly stopping: boolean;
}

/**
 * The grace is over: what another replica can run goes back to the queue (HAND_BACK_TIMEOUT_MS at
 * most), then `kill` kills the rest.
 */
async function handBackThen(options: Pick<ShutdownOptions, 'handBack' | 'logger'>, kill: () => void) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<number>((resolve) => {
    timer = setTimeout(() => resolve(0), HAND_BACK_TIMEOUT_MS);
  });
  const handed = await Promise.race([options.handBack?.() ?? Promise.resolve(0), timeout]).catch(() => 0);
  clearTimeout(timer);
  if (handed > 0)
    options.logger.info({ builds: handed }, 'grace period over: builds handed back to the queue');
  kill();
}

export function createShutdown(options: ShutdownOptions): ShutdownController {
  const { server, logger, abort } = options;
  let stopping = false;
  let forced = false;
  let finished = false;
  let sweep: NodeJS.Timeout | undefined;
  let grace: NodeJS.Timeout | undefined;

  async function finish(code: number): Promise<void> {
    if (finished) return;
    finished = true;
    clearInterval(sweep);
    clearTimeout(grace);
    logger.info({ exitCode: code }, 'stopped');
    await options.flush().catch(() => undefined);
    options.exit(code);
  }

  function force(reason: string): void {
    if (forced || finished) return;
    forced = true;
    logger.warn({ reason }, 'shutdown forced: killing running commands');
    abort.abort(new Error(`shutdown forced: ${reason}`));
    setTimeout(() => {
      server.closeAllConnections();
      void finish(1);
    }, FORCED_EXIT_DELAY_MS).unref();
  }

  return {
    get stopping() {
      return stopping;
    },
    onSignal(signal) {
      if (stopping) {
        force(`second signal ${signal}`);
        return;
      }
      // Readiness reads `stopping`: it answers 503 from here on, before the listener closes.
      stopping = true;
      options.stopTaking?.();
      logger.info(
        { signal, graceSeconds: Math.round(options.graceMs / 1000) },
        'shutting down: not accepting connections, letting in-flight requests finish',
      );
      server.close(() => {
        const builds = options.drained?.() ?? Promise.resolve();
        void builds.catch(() => undefined).then(() => finish(forced ? 1 : 0));
      });
      // Keep-alive connections with no request in flight would hold close() forever.
      server.closeIdleConnections();
      sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      grace = setTimeout(() => void handBackThen(options, () => force('grace period over')), options.graceMs);
    },
  };
}
