/**
 * The append thread of Redis mode (a worker thread; append-worker.ts starts it): it holds a Redis
 * connection of its own and the writing side of every open log (redis-log-writer.ts), so that the
 * masking scans, the client's copies and the socket writes of fast output run beside the service's
 * event loop instead of on it. What it has to say goes to the service's logger.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createRedisConnection } from '../redis/connection.js';
import type { AppendThreadData, FromAppendThread, ToAppendThread } from './append-protocol.js';
import { createJoinSpaces, openRedisLogWriter, type RedisLogWriter } from './redis-log-writer.js';

function serve(port: MessagePort, data: AppendThreadData): void {
  const send = (message: FromAppendThread): void => port.postMessage(message);
  const logAt =
    (level: 'info' | 'warn') =>
    (fields: unknown, message?: unknown): void =>
      send({ type: 'log', level, fields: fields as Record<string, unknown>, message: String(message ?? '') });
  const logger = { info: logAt('info'), warn: logAt('warn') };
  const connection = createRedisConnection(data.redisUrl, logger, 'log appends');
  const spaces = createJoinSpaces();
  const writers = new Map<string, RedisLogWriter>();
  const closing = new Set<Promise<void>>();

  port.on('message', (message: ToAppendThread) => {
    switch (message.type) {
      case 'open':
        writers.set(
          message.id,
          openRedisLogWriter({
            client: connection.client,
            id: message.id,
            kind: message.kind,
            secrets: message.secrets,
            sizeCapBytes: data.sizeCapBytes,
            retention: data.retention,
            now: Date.now,
            spaces,
            warn: logger.warn,
          }),
        );
        return;
      case 'write': {
        const writer = writers.get(message.id);
        for (const chunk of message.chunks) writer?.write(chunk);
        return;
      }
      case 'secrets':
        writers.get(message.id)?.addSecrets(message.secrets);
        return;
      case 'close': {
        const writer = writers.get(message.id);
        writers.delete(message.id);
        const closed = (writer?.close() ?? Promise.resolve()).then(() => {
          closing.delete(closed);
          send({ type: 'closed', id: message.id });
        });
        closing.add(closed);
        return;
      }
      case 'stop':
        void Promise.all(closing)
          .then(() => connection.close())
          .then(() => {
            send({ type: 'stopped' });
            port.close();
          });
        return;
    }
  });
}

if (parentPort === null)
  throw new Error('append-thread runs as a worker thread (append-worker.ts starts it)');
serve(parentPort, workerData as AppendThreadData);
