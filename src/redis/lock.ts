/**
 * A lock of Redis mode: one lease (lease.ts) under a random token of this holder. Each lock value
 * is one holder: the retention run lock and the prebuild schedules' lock (keys.ts).
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './connection.js';
import { LEASE_MS, releaseLease, takeLease, type LeaseHold } from './lease.js';

export class RedisLock {
  readonly #lease: LeaseHold;

  constructor(
    private readonly redis: Pick<RedisConnection, 'call'>,
    key: string,
    readonly leaseMs: number = LEASE_MS,
  ) {
    this.#lease = { key, token: randomUUID() };
  }

  get key(): string {
    return this.#lease.key;
  }

  /** Takes the lock, or renews it when this holder has it; whether this holder has it now. */
  async hold(): Promise<boolean> {
    const taken = await this.redis.call((client) => takeLease(client, this.#lease, this.leaseMs));
    return taken.kind !== 'held';
  }

  /** Lets it go, when this holder has it. */
  async release(): Promise<void> {
    await this.redis.call((client) => releaseLease(client, this.#lease));
  }

  /**
   * Runs `work` while holding the lock, renewed every third of its lease, then lets it go; false
   * (and `work` not run) when another holder has it.
   */
  async holdWhile(work: () => Promise<void>): Promise<boolean> {
    if (!(await this.hold())) return false;
    const renew = setInterval(() => void this.hold().catch(() => undefined), this.leaseMs / 3);
    renew.unref();
    try {
      await work();
      return true;
    } finally {
      clearInterval(renew);
      await this.release().catch(() => undefined);
    }
  }
}
