/**
 * The Redis connection of Redis mode: one object made at start-up by src/stores.ts. Commands fail fast
 * while Redis is unreachable (no offline queue: the caller answers 503 instead of hanging), the
 * client reconnects on its own, and `probe()` tells readiness whether Redis answers right now.
 * The URL (and its password) is never logged: state changes are logged by endpoint only.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { redisEndpoint } from '../config/redis-url.js';
import { isServiceError, reasonOf, serviceError } from '../errors/errors.js';
import { maskSecrets, redisSecrets, secretVariants } from '../secrets/masking.js';
import type { Logger } from '../observability/logger.js';

/** A command unanswered this long fails (the request answers 503). */
const COMMAND_TIMEOUT_MS = 5000;
const CONNECT_TIMEOUT_MS = 3000;
/** Readiness: a PING unanswered this long means Redis is unavailable. */
const PROBE_TIMEOUT_MS = 2000;
/** Reconnect attempts back off up to this delay, forever. */
const MAX_RECONNECT_DELAY_MS = 1000;

export interface RedisConnection {
  /** Commands; each fails at once while disconnected. */
  readonly client: Redis;
  /**
   * Another connection with the command connection's options plus `overrides` (subscriptions; log
   * appends, so that their large commands never queue the requests' commands behind them), named
   * `role` in log lines and closed with this one.
   */
  duplicate(role: string, overrides?: Partial<RedisOptions>): Redis;
  /** Whether Redis answers a PING now (readiness). Never throws. */
  probe(): Promise<boolean>;
  /** Runs store commands: any failure that is not already a ServiceError becomes STORE_UNAVAILABLE (503). */
  call<T>(fn: (client: Redis) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Who a connection's log lines name, and the secrets masked in them. */
interface Watcher {
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  readonly where: { readonly redis: { host: string; port: number; tls: boolean } };
  readonly variants: ReturnType<typeof secretVariants>;
  /** Closed on purpose: the connections' ends are not problems. */
  readonly closing: () => boolean;
}

/** Logs `client`'s state changes by endpoint and `role`: one line per distinct problem. */
function watch(client: Redis, role: string, watcher: Watcher): Redis {
  const { logger, where, variants } = watcher;
  let up = false;
  let lastProblem = '';
  client.on('ready', () => {
    up = true;
    lastProblem = '';
    logger.info({ ...where, role }, 'redis connected');
  });
  client.on('error', (err: unknown) => {
    // One line per distinct problem, not one per reconnect attempt.
    const problem = maskSecrets(reasonOf(err), variants);
    if (problem === lastProblem) return;
    lastProblem = problem;
    logger.warn({ ...where, role, problem }, 'redis unavailable');
  });
  client.on('close', () => {
    if (!up || watcher.closing()) return;
    up = false;
    logger.warn({ ...where, role }, 'redis connection lost; reconnecting');
  });
  return client;
}

/** Whether `client` answers a PING within PROBE_TIMEOUT_MS. Never throws. */
async function probe(client: Redis): Promise<boolean> {
  if (client.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  const ping = client.ping().then(
    (answer) => answer === 'PONG',
    () => false,
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: COMMAND_TIMEOUT_MS,
  connectTimeout: CONNECT_TIMEOUT_MS,
  retryStrategy: (times) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
  // ioredis would print unhandled 'error' events itself; each client below has a listener.
  showFriendlyErrorStack: false,
};

export function createRedisConnection(
  redisUrl: string,
  logger: Pick<Logger, 'info' | 'warn'>,
): RedisConnection {
  const endpoint = redisEndpoint(redisUrl);
  let closing = false;
  const watcher: Watcher = {
    logger,
    where: { redis: { host: endpoint.host, port: endpoint.port, tls: endpoint.tls } },
    variants: secretVariants(redisSecrets(redisUrl)),
    closing: () => closing,
  };
  const client = watch(new Redis(redisUrl, { ...OPTIONS }), 'commands', watcher);
  const extra = new Set<Redis>();

  return {
    client,
    duplicate(role, overrides = {}) {
      const other = watch(client.duplicate(overrides), role, watcher);
      extra.add(other);
      other.once('end', () => extra.delete(other));
      return other;
    },
    probe: () => probe(client),
    async call(fn) {
      try {
        return await fn(client);
      } catch (err) {
        if (isServiceError(err)) throw err;
        throw serviceError('STORE_UNAVAILABLE');
      }
    },
    async close() {
      closing = true;
      for (const other of extra) other.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
