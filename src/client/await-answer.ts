/**
 * Waits for an accepted build's answer with long polls of `GET /builds/{id}?wait=` (poll-wait.ts
 * sizes them to fit the front). Each poll ends well inside any proxy's timeout; a poll cut by a
 * front, a lost connection or a gateway's 502/503/504 (a replica restarting) is simply asked again,
 * as long as the service stays unreachable for less than --timeout.
 */
import { Unreachable, call, jsonOf, type Answer } from './http.js';
import { isRefusal } from './identity.js';
import type { Sink } from './output.js';
import { PollWait } from './poll-wait.js';
import { sleep } from './signals.js';

/** Pause before asking again after a failed poll. */
const RETRY_MS = 500;
/** A poll's connection silent this long past its wait is taken as lost. */
const SILENCE_GRACE_MS = 30_000;
/** What a front answers while no replica behind it can. */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

export type Awaited =
  | { readonly kind: 'answer'; readonly answer: Answer }
  | { readonly kind: 'gone'; readonly message: string }
  /** 401 or 403: the service refused who ibs is (never asked again). */
  | { readonly kind: 'refused'; readonly answer: Answer }
  | { readonly kind: 'interrupted' };

/** A record's `answer: {status, body}` as the answer a synchronous request would have had. */
export function answerOf(record: Record<string, unknown> | undefined): Answer | undefined {
  const answer = record?.answer as { status?: unknown; body?: unknown } | undefined;
  if (typeof answer?.status !== 'number' || typeof answer.body !== 'object' || answer.body === null)
    return undefined;
  return { status: answer.status, headers: {}, text: JSON.stringify(answer.body) };
}

export interface AwaitOptions {
  readonly server: URL;
  readonly id: string;
  readonly sink: Sink;
  readonly interrupt: AbortSignal;
  /** How long the service may stay unreachable (--timeout), in ms. */
  readonly outageMs: number;
}

/** Polls until the record carries its answer, the build is gone, or ibs is interrupted. */
export async function awaitAnswer(options: AwaitOptions): Promise<Awaited> {
  const { server, id, sink, interrupt } = options;
  const waits = new PollWait();
  let lastHeard = Date.now();
  let announced = false;
  for (;;) {
    if (interrupt.aborted) return { kind: 'interrupted' };
    const asked = waits.seconds;
    const url = new URL(`builds/${encodeURIComponent(id)}?wait=${asked}`, server);
    const started = Date.now();
    const outcome = await poll(url, asked, interrupt);
    const elapsed = Date.now() - started;
    if (outcome === 'interrupted') return { kind: 'interrupted' };
    if (outcome instanceof Unreachable || GATEWAY_STATUSES.has(outcome.status)) {
      if (outcome instanceof Unreachable) waits.lost(asked, elapsed);
      else if (outcome.status === 504) waits.timedOut(asked, elapsed);
      const what = outcome instanceof Unreachable ? outcome.message : `the front answered ${outcome.status}`;
      if (Date.now() - lastHeard > options.outageMs)
        return { kind: 'gone', message: `${what}; --timeout ran out while waiting for build ${id}` };
      if (!announced) sink.line(`ibs: ${what}; asking again for build ${id} (it runs on)`);
      announced = true;
      await sleep(RETRY_MS, interrupt);
      continue;
    }
    lastHeard = Date.now();
    announced = false;
    if (isRefusal(outcome.status)) return { kind: 'refused', answer: outcome };
    if (outcome.status === 404)
      return { kind: 'gone', message: `build ${id} is gone (404): ${outcome.text}` };
    if (outcome.status !== 200)
      return { kind: 'gone', message: `unexpected answer to GET /builds/${id} (${outcome.status})` };
    const answer = answerOf(jsonOf(outcome));
    if (answer !== undefined) return { kind: 'answer', answer };
  }
}

async function poll(
  url: URL,
  asked: number,
  interrupt: AbortSignal,
): Promise<Answer | Unreachable | 'interrupted'> {
  try {
    return await call(url, { signal: interrupt, idleMs: asked * 1000 + SILENCE_GRACE_MS });
  } catch (err) {
    if (interrupt.aborted) return 'interrupted';
    if (err instanceof Unreachable) return err;
    throw err;
  }
}
