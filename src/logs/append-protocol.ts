/**
 * The messages between the service's event loop (append-worker.ts) and the append thread
 * (append-thread.ts), in one place. Messages on one port arrive in order: a log's writes, secrets
 * and close reach the thread as they were made.
 */
import type { LogKind } from './types.js';

export interface AppendThreadData {
  /** The Redis URL (with its password: held in memory only, never logged). */
  readonly redisUrl: string;
  readonly sizeCapBytes: number;
  /** Closed logs kept per kind. */
  readonly retention: number;
}

export type ToAppendThread =
  | {
      readonly type: 'open';
      readonly id: string;
      readonly kind: LogKind;
      readonly secrets: readonly string[];
    }
  | { readonly type: 'write'; readonly id: string; readonly chunks: readonly (string | Uint8Array)[] }
  | { readonly type: 'secrets'; readonly id: string; readonly secrets: readonly string[] }
  | { readonly type: 'close'; readonly id: string }
  /** Finish the closes under way, close the connection, then answer `stopped`. */
  | { readonly type: 'stop' };

export type FromAppendThread =
  | { readonly type: 'closed'; readonly id: string }
  | {
      readonly type: 'log';
      readonly level: 'info' | 'warn';
      readonly fields: Record<string, unknown>;
      readonly message: string;
    }
  | { readonly type: 'stopped' };
