/**
 * The shared build queue's store (docs/queue.md): the queue's state read and changed as one
 * document, in memory (embedded mode) or in Redis (one queue for every replica). Every change is
 * one atomic step over the whole state; the order itself is fair-order.ts's.
 */
import type { QueueState } from './fair-order.js';

export interface QueueStore {
  /**
   * Applies `change` to the state atomically and answers what it returned. `alive` names the
   * running builds and replicas still alive (Redis mode; embedded: all), read before the change.
   */
  update<T>(change: (state: QueueState, alive: Liveness) => { state: QueueState; value: T }): Promise<T>;
  /** The state as it stands. */
  read(): Promise<QueueState>;
  /** Redis mode: wakes `listener` whenever any replica adds to the queue or frees a slot. */
  onChange(listener: () => void): void;
  /** Tells every replica the queue changed. */
  changed(): Promise<void>;
  /** This replica says it is alive (its queued builds are kept while it is). */
  heartbeat(): Promise<void>;
  close(): void;
}

/** What is alive, as the store saw it before a change. */
export interface Liveness {
  readonly builds: ReadonlySet<string>;
  readonly replicas: ReadonlySet<string>;
}
