/** Captured command logs: the full stdout and stderr of one clone (`git-*`) or one build-and-push (`img-*`). */

export const LOG_KINDS = ['git', 'img'] as const;
export type LogKind = (typeof LOG_KINDS)[number];

export interface CommandLogWriter {
  /** `git-<uuid>` or `img-<uuid>`. */
  readonly id: string;
  /** Appends output; every known secret is masked before it reaches the file. */
  write(chunk: string | Uint8Array): void;
  /** Adds secrets to mask from now on (e.g. a credential resolved after the log was opened). */
  addSecrets(secrets: readonly string[]): void;
  /** Flushes and closes the file, then prunes the oldest logs of its kind beyond retention (never throws). */
  close(): Promise<void>;
}

export interface LogStore {
  /** Opens a new log of `kind`; `secrets` (plus the server's own) are masked in everything written. */
  open(kind: LogKind, secrets?: readonly string[]): Promise<CommandLogWriter>;
  /** The full text; throws INVALID_LOG_ID for an id outside the pattern, LOG_NOT_FOUND for an unknown one. */
  read(id: string): Promise<string>;
  /** Deletes one log; same errors as read. */
  remove(id: string): Promise<void>;
}
