/**
 * The builds this replica runs in Redis mode: each has an alive key, a lease (src/redis/lease.ts)
 * renewed here while the replica lives, so that a replica that died lets its builds be read as lost.
 */
import { reasonOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { buildAliveKey } from '../redis/keys.js';
import { renewLeases } from '../redis/lease.js';

export class OwnBuilds {
  readonly #ids = new Set<string>();
  readonly #timer: NodeJS.Timeout;

  /** Renews the leases every third of `leaseMs`, as `replica`; a failed renewal is logged. */
  constructor(
    connection: Pick<RedisConnection, 'client'>,
    replica: string,
    leaseMs: number,
    logger: Pick<Logger, 'warn'>,
  ) {
    const renew = (): void => {
      if (this.#ids.size === 0) return;
      const leases = [...this.#ids].map((id) => ({ key: buildAliveKey(id), token: replica }));
      renewLeases(connection.client, leases, leaseMs).catch((err: unknown) => {
        logger.warn({ problem: reasonOf(err) }, 'could not renew build leases');
      });
    };
    this.#timer = setInterval(renew, leaseMs / 3);
    this.#timer.unref();
  }

  add(id: string): void {
    this.#ids.add(id);
  }

  delete(id: string): void {
    this.#ids.delete(id);
  }

  /** The ids, live: a build added or ended while they are walked is seen or skipped. */
  ids(): IterableIterator<string> {
    return this.#ids.values();
  }

  /** Stops renewing (the process is ending). */
  close(): void {
    clearInterval(this.#timer);
  }
}
