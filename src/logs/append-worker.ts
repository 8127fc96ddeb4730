/**
 * The service's side of the append thread (append-thread.ts): one object made at start-up by the
 * Redis log store. A writer here only queues what it is given and posts it once per turn of the
 * event loop (in order, on one port); the thread masks it and sends it to Redis on its own
 * connection. A Uint8Array that owns its whole memory (a command's output chunk) is moved to the
 * thread, not copied: the writer's caller must not use a chunk after writing it. `close()` of a
 * writer resolves once the thread has closed the log in Redis (or given up and said so).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../observability/logger.js';
import type { AppendThreadData, FromAppendThread, ToAppendThread } from './append-protocol.js';
import type { CommandLogWriter, LogKind } from './types.js';

/**
 * The thread, from its module next to this one. Run from the TypeScript source (tests and
 * benchmarks under tsx), tsx's hooks do not reach a worker's entry on Node 20, so the thread
 * registers them before it loads its module; the built service runs the `.js` module directly.
 */
function startThread(data: AppendThreadData): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./append-thread.js', import.meta.url), { workerData: data });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./append-thread.ts', import.meta.url).href);
  return new Worker(`import(${tsx}).then((api) => { api.register(); return import(${entry}); })`, {
    eval: true,
    workerData: data,
  });
}

/** The chunks' memory that can move to the thread: whole, unshared ArrayBuffers, each once. */
function movable(chunks: readonly (string | Uint8Array)[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const chunk of chunks) {
    if (typeof chunk === 'string' || !(chunk.buffer instanceof ArrayBuffer)) continue;
    if (chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength) buffers.add(chunk.buffer);
  }
  return [...buffers];
}

export interface AppendWorker {
  /** The writer of a log whose keys exist in Redis. */
  writer(id: string, kind: LogKind, secrets: readonly string[]): CommandLogWriter;
  /** Lets the closes under way finish, then stops the thread and its connection. */
  close(): Promise<void>;
}

interface Thread {
  readonly worker: Worker;
  /** Logs being closed: resolved when the thread says `closed`, or when it is gone. */
  readonly closing: Map<string, () => void>;
  exited: boolean;
  stopped?: () => void;
}

export function startAppendWorker(
  data: AppendThreadData,
  logger: Pick<Logger, 'info' | 'warn' | 'error'>,
): AppendWorker {
  let stopping = false;
  const start = (): Thread => {
    const thread: Thread = { worker: startThread(data), closing: new Map(), exited: false };
    const { worker, closing } = thread;
    worker.on('message', (message: FromAppendThread) => {
      if (message.type === 'log') logger[message.level](message.fields, message.message);
      else if (message.type === 'closed') {
        closing.get(message.id)?.();
        closing.delete(message.id);
      } else thread.stopped?.();
    });
    worker.on('error', (err) =>
      logger.error(
        { problem: err.message },
        'command log append thread failed; logs it was writing stay open',
      ),
    );
    // A thread gone (failed or stopped) leaves no close waiting.
    worker.on('exit', () => {
      thread.exited = true;
      for (const done of closing.values()) done();
      closing.clear();
      thread.stopped?.();
    });
    // The thread never keeps the service alive on its own.
    worker.unref();
    return thread;
  };
  let current = start();

  return {
    writer(id, kind, secrets) {
      // A failed thread (a bug: logged) is replaced for the logs opened from now on.
      if (current.exited && !stopping) current = start();
      const thread = current;
      const post = (message: ToAppendThread, transfer: ArrayBuffer[] = []): void => {
        if (!thread.exited) thread.worker.postMessage(message, transfer);
      };
      post({ type: 'open', id, kind, secrets });
      let held: (string | Uint8Array)[] = [];
      const send = (): void => {
        if (held.length === 0) return;
        const chunks = held;
        held = [];
        post({ type: 'write', id, chunks }, movable(chunks));
      };
      let closed: Promise<void> | undefined;
      return {
        id,
        write(chunk) {
          // What is written in one turn goes in one message.
          if (held.length === 0) setImmediate(send);
          held.push(chunk);
        },
        addSecrets(more) {
          send();
          post({ type: 'secrets', id, secrets: more });
        },
        close() {
          closed ??= new Promise<void>((resolve) => {
            send();
            if (thread.exited) return resolve();
            thread.closing.set(id, resolve);
            post({ type: 'close', id });
          });
          return closed;
        },
      };
    },
    async close() {
      stopping = true;
      const thread = current;
      if (!thread.exited)
        await new Promise<void>((resolve) => {
          thread.stopped = resolve;
          thread.worker.postMessage({ type: 'stop' } satisfies ToAppendThread);
        });
      await thread.worker.terminate();
    },
  };
}
