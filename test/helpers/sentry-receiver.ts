// A local Sentry-compatible envelope receiver: `POST /api/<project>/envelope/`, keeps every event.
import { eventually } from './eventually.js';
import { listen } from './http-listener.js';

interface SentryEvent {
  event_id?: string;
  release?: string;
  environment?: string;
  level?: string;
  tags?: Record<string, string>;
  exception?: { values?: { type?: string; value?: string; mechanism?: { type?: string } }[] };
  request?: Record<string, unknown>;
  breadcrumbs?: unknown;
  [key: string]: unknown;
}

export interface SentryReceiver {
  /** A DSN pointing at this receiver (project 1). */
  dsn: string;
  events: () => SentryEvent[];
  /** Every raw envelope received (to search for secrets). */
  rawText: () => string;
  waitForEvent: (match: (event: SentryEvent) => boolean, timeoutMs?: number) => Promise<SentryEvent>;
  close: () => Promise<void>;
}

/** Envelope: a header line, then pairs of item-header line and payload line. */
function parseEnvelope(text: string): SentryEvent[] {
  const lines = text.split('\n');
  const events: SentryEvent[] = [];
  for (let i = 1; i + 1 < lines.length; i += 2) {
    const header = JSON.parse(lines[i] ?? '{}') as { type?: string };
    if (header.type === 'event') events.push(JSON.parse(lines[i + 1] ?? '{}') as SentryEvent);
  }
  return events;
}

export async function startSentryReceiver(): Promise<SentryReceiver> {
  const events: SentryEvent[] = [];
  let raw = '';
  const listener = await listen(({ method, path, body }) => {
    if (method !== 'POST' || !/^\/api\/\d+\/envelope\/?$/.test(path)) return { status: 404, body: '{}' };
    const text = body.toString('utf8');
    raw += text + '\n';
    events.push(...parseEnvelope(text));
    return { status: 200, body: '{}' };
  });
  const { host } = new URL(listener.origin);
  return {
    dsn: `http://publickey@${host}/1`,
    events: () => [...events],
    rawText: () => raw,
    waitForEvent: (match, timeoutMs = 30_000) =>
      eventually(() => events.find(match), {
        timeout: timeoutMs,
        interval: 50,
        what: 'a matching error-tracking event',
      }),
    close: listener.close,
  };
}
