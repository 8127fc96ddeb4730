/**
 * Redis errors told apart by their code, never by their text: an error reply starts with its code
 * (`OOM` at maxmemory, `NOSCRIPT`, `READONLY`, `MOVED`...), the rest is prose that may change.
 */
import { ReplyError } from 'ioredis';

/** The code of a Redis error reply (its first word); undefined for anything else (a lost connection, a timeout). */
export function replyCode(err: unknown): string | undefined {
  if (!(err instanceof ReplyError)) return undefined;
  return /^[A-Z][A-Z_]*(?=\s|$)/.exec((err as Error).message)?.[0];
}
