import { pino, type Logger, type DestinationStream } from 'pino';
import { currentTraceIds } from './tracing.js';
import { MASK } from '../secrets/masking.js';

export type { Logger };

/** Paths pino removes from every log line: credentials must never reach the logs. */
const REDACT_PATHS = [
  'req.headers["x-registry-password"]',
  'req.headers["x-registry-username"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-registry-password"]',
  'headers.authorization',
  '*.password',
  '*.token',
  '*.privateKey',
  '*.auth',
  'gitCredentials',
  'registryCredentials',
  '*.gitCredentials',
  '*.registryCredentials',
];

export interface LoggerOptions {
  serviceName: string;
  environment: string;
  level?: string;
  /** Where lines go (default stdout); tests pass a stream to read them. */
  destination?: DestinationStream;
}

/** One JSON line per event, every line with `service.name` and `deployment.environment.name`. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { 'service.name': options.serviceName, 'deployment.environment.name': options.environment },
      redact: { paths: REDACT_PATHS, censor: MASK },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // trace_id / span_id of the active span (nothing when tracing is off).
      mixin: currentTraceIds,
    },
    options.destination,
  );
}
