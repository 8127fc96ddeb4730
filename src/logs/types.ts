/** Captured command logs: the full stdout and stderr of one clone (`git-*`) or one build-and-push (`img-*`). */

export const LOG_KINDS = ['git', 'img'] as const;
export type LogKind = (typeof LOG_KINDS)[number];

export interface CommandLogWriter {
  /** `git-<uuid>` or `img-<uuid>`. */
  readonly id: string;
  /**
   * Appends output; every known secret is masked before it is stored. A Uint8Array is kept as it is
   * (not copied) until stored: the caller must not change it afterwards.
   */
  write(chunk: string | Uint8Array): void;
  /** Adds secrets to mask from now on (e.g. a credential resolved after the log was opened). */
  addSecrets(secrets: readonly string[]): void;
  /** Flushes and closes the file, then prunes the oldest logs of its kind beyond retention (never throws). */
  close(): Promise<void>;
}

/** A log as read at one moment. */
export interface LogSnapshot {
  /** Everything stored so far (masked, whole lines while the command runs). */
  readonly text: string;
  /** False while the command still writes to it. */
  readonly complete: boolean;
}

/**
 * The store of command logs. An interface, so that a shared implementation (several replicas)
 * can replace the embedded one (store.ts) without touching the routes. What is stored is
 * already masked; readers and followers get exactly the stored bytes, in order.
 */
export interface LogStore {
  /** Opens a new log of `kind`; `secrets` (plus the server's own) are masked in everything written. */
  open(kind: LogKind, secrets?: readonly string[]): Promise<CommandLogWriter>;
  /** What is stored now; throws INVALID_LOG_ID for an id outside the pattern, LOG_NOT_FOUND for an unknown one. */
  read(id: string): Promise<LogSnapshot>;
  /**
   * The log from its first byte, then each new piece as it is stored, ending once the log is
   * complete (at once for a complete log) or when `signal` aborts. Same errors as read, thrown
   * by the returned promise (before any byte). Any number of followers; they change nothing.
   */
  follow(id: string, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /** Deletes one log; same errors as read. */
  remove(id: string): Promise<void>;
}
