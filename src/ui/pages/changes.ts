/**
 * Following GET /builds/events, the change feed of the builds: read with fetch (so that the
 * caller's bearer token goes with it, which EventSource cannot send), its server-sent events
 * parsed as they come, and followed again when it ends (the service ends each feed after a while).
 */
import { call, SignInNeeded } from './api.js';
import { pause } from './live.js';

/** A build changed (`id`), or changes may have been missed (`reset`: read the first page again). */
export type Change = { readonly kind: 'build'; readonly id: string } | { readonly kind: 'reset' };

/** The events of complete blocks of `text`; what is left is the start of the next block. */
function parseBlocks(text: string, onChange: (change: Change) => void): string {
  const blocks = text.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice('event: '.length);
      else if (line.startsWith('data: ')) data += line.slice('data: '.length);
    }
    if (event === 'reset') onChange({ kind: 'reset' });
    if (event !== 'build') continue;
    try {
      const { id } = JSON.parse(data) as { id?: unknown };
      if (typeof id === 'string') onChange({ kind: 'build', id });
    } catch {
      // not an event of this service: ignored
    }
  }
  return rest;
}

/**
 * Reads one feed until it ends; resolves then (or when the page is left). `onOpen` is called once
 * the service answered: from then on no change is missed.
 */
async function readFeed(
  signal: AbortSignal,
  onChange: (change: Change) => void,
  onOpen: () => void,
): Promise<void> {
  const res = await call('/builds/events', { signal });
  onOpen();
  const reader = res.body?.getReader();
  if (reader === undefined) return;
  const decoder = new TextDecoder();
  let pending = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    pending = parseBlocks(pending + decoder.decode(value, { stream: true }), onChange);
  }
}

/**
 * Follows the feed until `signal` aborts, handing on each change; each time it is followed again
 * (a feed ended, the network failed) `reset` is handed on first, as changes may have been missed.
 * `settled` is called when the first feed opened or failed: a list read after it misses nothing
 * (once opened, every change is heard; after a failure, the next feed starts with `reset`).
 */
export async function followChanges(
  signal: AbortSignal,
  onChange: (change: Change) => void,
  settled: () => void,
): Promise<void> {
  let first = true;
  while (!signal.aborted) {
    if (!first) onChange({ kind: 'reset' });
    first = false;
    try {
      await readFeed(signal, onChange, settled);
    } catch (err) {
      settled();
      if (signal.aborted) return;
      if (err instanceof SignInNeeded) throw err;
      await pause(1000, signal);
    }
  }
}
