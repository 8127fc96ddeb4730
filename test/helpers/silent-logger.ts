/** A logger that drops everything (tests and benchmarks that do not read the service log). */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/observability/logger.js';

export function silentLogger(): Logger {
  return createLogger({
    serviceName: 't',
    environment: 't',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
}
