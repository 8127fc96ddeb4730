/**
 * The queue of embedded mode: the state in this process, persisted nowhere (a restart ends the
 * builds that waited as failures, docs/queue.md). Every running build and this replica are alive.
 */
import { EMPTY_QUEUE, type QueueState } from './fair-order.js';
import type { QueueStore } from './types.js';

export function createMemoryQueue(replica: string): QueueStore {
  let state: QueueState = EMPTY_QUEUE;
  const listeners: (() => void)[] = [];
  return {
    async update(change) {
      const alive = { builds: new Set(state.running.map((r) => r.id)), replicas: new Set([replica]) };
      const next = change(state, alive);
      state = next.state;
      return next.value;
    },
    read: async () => state,
    onChange: (listener) => void listeners.push(listener),
    changed: async () => {
      for (const listener of listeners) listener();
    },
    heartbeat: async () => undefined,
    close: () => undefined,
  };
}
