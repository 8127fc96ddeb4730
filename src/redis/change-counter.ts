/**
 * A change counter: bumped on each change, with waiters that wake on the next one. A reader takes
 * the version before it reads, and after reading nothing new waits for a change since that version,
 * so a change that lands between the read and the wait is never missed. Used by the embedded log
 * store (text reached a log's file) and by Redis pub/sub (a message on a channel).
 */
export class ChangeCounter {
  #version = 0;
  readonly #waiters = new Set<() => void>();

  get version(): number {
    return this.#version;
  }

  /** Something changed: bumps the version and wakes every waiter. */
  changed(): void {
    this.#version += 1;
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves once the version differs from `seen`, or `signal` aborts. */
  async changeSince(seen: number, signal?: AbortSignal): Promise<void> {
    if (this.#version !== seen || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }
}
