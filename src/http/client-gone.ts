/**
 * The one way a router learns that its client went away: a signal aborted, with the `client_gone`
 * cancellation as its reason, when the response closes before it was written in full. A build
 * waited on, a long poll and a log followed all stop on it.
 */
import type { Context } from 'koa';
import { Cancellation } from '../exec/cancellation.js';

export interface ClientGone {
  /** Aborted when the client goes away before its answer is written. */
  readonly signal: AbortSignal;
  /** Stops listening (once the answer is settled). */
  readonly detach: () => void;
}

/** Listens for the response of `koaCtx` closing early. O(1). */
export function clientGone(koaCtx: Context): ClientGone {
  const gone = new AbortController();
  const onClose = (): void => {
    if (!koaCtx.res.writableFinished) gone.abort(new Cancellation('client_gone'));
  };
  koaCtx.res.once('close', onClose);
  return { signal: gone.signal, detach: () => koaCtx.res.off('close', onClose) };
}
