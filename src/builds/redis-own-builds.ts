/**
 * The builds this replica runs in Redis mode: each has an alive key, a lease (src/redis/lease.ts)
 * kept here while the replica lives (renewed, or taken again once Redis answers after failing
 * longer than a lease), so that a replica that died lets its builds be read as lost or run again.
 * A lease another holder took meanwhile means the build runs elsewhere now: it is let go here.
 */
import { reasonOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient, RedisConnection } from '../redis/connection.js';
import { buildAliveKey, buildUnleasedKey } from '../redis/keys.js';
import { LEASE_LUA } from '../redis/lease.js';
import { redisScript } from '../redis/script.js';

/**
 * KEYS: lease, unleased mark. ARGV: token, ms. The lease renewed, or taken again when it ran out
 * (the mark a read left meanwhile dropped: the build runs); answers 0, or the other holder.
 */
const KEEP = redisScript(`${LEASE_LUA}
local taken = lease_take(KEYS[1], ARGV[1], ARGV[2])
if taken == 2 then redis.call('DEL', KEYS[2]) end
if taken == 1 or taken == 2 then return 0 end
return taken
`);

/** Keeps each build's lease; answers the ids whose lease another holds. One script per lease, sent together. */
async function keepLeases(
  client: RedisClient,
  ids: readonly string[],
  replica: string,
  ms: number,
): Promise<Set<string>> {
  const held = await Promise.all(
    ids.map((id) => KEEP.run(client, [buildAliveKey(id), buildUnleasedKey(id)], [replica, ms])),
  );
  return new Set(ids.filter((_, i) => held[i] !== 0));
}

export class OwnBuilds {
  readonly #ids = new Set<string>();
  readonly #timer: NodeJS.Timeout;
  readonly #takenOver: ((id: string) => void)[] = [];
  readonly #offReady: () => void;
  readonly #lettingGo = new Map<string, NodeJS.Timeout>();

  /**
   * Keeps the leases every third of `leaseMs`, and at once when the connection is ready again, as
   * `replica`; a failed renewal is logged. O(builds here) per renewal, one round trip per node.
   */
  constructor(
    connection: Pick<RedisConnection, 'client'>,
    replica: string,
    leaseMs: number,
    logger: Pick<Logger, 'warn'>,
  ) {
    const keep = (): void => {
      if (this.#ids.size === 0) return;
      keepLeases(connection.client, [...this.#ids], replica, leaseMs).then(
        (held) => {
          for (const id of held) {
            if (!this.#ids.delete(id)) continue;
            logger.warn({ buildId: id }, 'the lease of a build running here is held by another: let go');
            for (const listener of this.#takenOver) listener(id);
          }
        },
        (err: unknown) => logger.warn({ problem: reasonOf(err) }, 'could not renew build leases'),
      );
    };
    this.#timer = setInterval(keep, leaseMs / 3);
    this.#timer.unref();
    connection.client.on('ready', keep);
    this.#offReady = () => connection.client.off('ready', keep);
  }

  add(id: string): void {
    this.#ids.add(id);
  }

  delete(id: string): void {
    this.#ids.delete(id);
    clearTimeout(this.#lettingGo.get(id));
    this.#lettingGo.delete(id);
  }

  /** Keeps the lease of `id` `ms` more, then lets it go (unless called again or deleted first). */
  letGoAfter(id: string, ms: number): void {
    clearTimeout(this.#lettingGo.get(id));
    const timer = setTimeout(() => this.delete(id), ms);
    timer.unref();
    this.#lettingGo.set(id, timer);
  }

  /** Calls `listener` with each build of this replica whose lease another took (it runs elsewhere). */
  onTakenOver(listener: (id: string) => void): void {
    this.#takenOver.push(listener);
  }

  /** The ids, live: a build added or ended while they are walked is seen or skipped. */
  ids(): IterableIterator<string> {
    return this.#ids.values();
  }

  /** Stops renewing (the process is ending). */
  close(): void {
    clearInterval(this.#timer);
    this.#offReady();
    for (const timer of this.#lettingGo.values()) clearTimeout(timer);
  }
}
