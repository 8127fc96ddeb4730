/**
 * Keeping a page live: a poll that calls again a moment after each answer until the page is left,
 * and a follower of a command log (`GET /logs/{id}?follow=true`) that hands on each piece of text.
 */
import { call, SignInNeeded } from './api.js';

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Calls `tick` now, then `ms` after each answer, until `signal` aborts or `tick` answers false.
 * A refusal for want of a token ends it (thrown); a network error is tried again.
 */
export async function poll(
  signal: AbortSignal,
  ms: number,
  tick: () => Promise<boolean | void>,
): Promise<void> {
  let first = true;
  while (!signal.aborted) {
    try {
      if ((await tick()) === false) return;
    } catch (err) {
      if (signal.aborted) return;
      if (first || err instanceof SignInNeeded) throw err;
    }
    first = false;
    await pause(ms, signal);
  }
}

/**
 * Streams the log `id` from its start, handing on each piece of text; resolves once the command
 * has ended (the stream closed) or the page was left.
 */
export async function followLog(
  id: string,
  signal: AbortSignal,
  onText: (text: string) => void,
): Promise<void> {
  const res = await call(`/logs/${encodeURIComponent(id)}?follow=true`, { signal });
  const reader = res.body?.getReader();
  if (reader === undefined) return;
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onText(decoder.decode(value, { stream: true }));
    }
    onText(decoder.decode());
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}
