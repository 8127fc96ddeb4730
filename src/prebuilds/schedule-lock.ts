/**
 * Who runs the prebuild schedules (reconcile, refresh): one replica at a time. Embedded mode: this
 * instance, always. Redis mode (a src/redis/lock.ts lock): a lock with a short lease that its
 * holder renews; when the holder dies the lease runs out and another replica takes it.
 */
export interface ScheduleLock {
  /** Takes the lock, or renews it when held; whether this instance holds it now. */
  hold(): Promise<boolean>;
  /** Lets it go (at shutdown), when held. */
  release(): Promise<void>;
}

export const alwaysHeld: ScheduleLock = {
  hold: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};
