/**
 * How long each long poll of `GET /builds/{id}?wait=` asks to be held. It starts under 30 s (a
 * Google Cloud backend's default) and shrinks when a front cuts a poll before its wait ran out
 * (a 504, or a connection closed after being held a while): the next wait is three quarters of
 * the time the cut took, so a front that cuts idle connections at 8 s gets 6 s polls. Pure.
 */

/** The first wait, in seconds: under every common front's idle timeout of 30 s or more. */
export const FIRST_WAIT_SECONDS = 25;
/** The shortest wait asked for. */
export const MIN_WAIT_SECONDS = 1;
/** A connection lost sooner than this is a lost peer (a replica restarting), not an idle cut. */
const IDLE_CUT_MIN_MS = 2000;

export class PollWait {
  #seconds = FIRST_WAIT_SECONDS;

  /** The `wait` of the next poll. */
  get seconds(): number {
    return this.#seconds;
  }

  /** A poll asked to be held `asked` seconds got a front's 504 after `elapsedMs`. */
  timedOut(asked: number, elapsedMs: number): void {
    this.#shrink(asked, elapsedMs);
  }

  /** A poll's connection was lost after `elapsedMs`: an idle cut when it had been held a while. */
  lost(asked: number, elapsedMs: number): void {
    if (elapsedMs >= IDLE_CUT_MIN_MS) this.#shrink(asked, elapsedMs);
  }

  /** A cut that came after the wait itself had run out (the service answered late) says nothing. */
  #shrink(asked: number, elapsedMs: number): void {
    if (elapsedMs >= asked * 1000) return;
    const fits = Math.floor((elapsedMs * 3) / 4 / 1000);
    this.#seconds = Math.max(MIN_WAIT_SECONDS, Math.min(this.#seconds - 1, fits));
  }
}
