// A webhook receiver as a subscriber runs one: an HTTP server on 127.0.0.1 that checks each request's
// signature with the `standardwebhooks` package (with each of its secrets) and parses the body with
// the `cloudevents` SDK, then answers what the test says. It can go down and come back on its port.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { HTTP, type CloudEvent } from 'cloudevents';
import { Webhook } from 'standardwebhooks';
import { readBody } from './http-listener.js';

interface ReceivedEvent {
  readonly webhookId: string;
  readonly timestamp: string;
  /** Whether the signature verified with each of the receiver's secrets, in order. */
  readonly verified: readonly boolean[];
  readonly event: CloudEvent<Record<string, unknown>>;
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
}

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

export interface EventReceiver {
  readonly url: string;
  readonly received: ReceivedEvent[];
  /** Attempts per webhook-id (every request, whatever was answered). */
  attemptsOf(id: string): number;
  /** The webhook-timestamp of each attempt of a webhook-id, in order. */
  timestampsOf(id: string): string[];
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const headerText = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};

function verifiedWith(secrets: readonly string[], raw: string, headers: IncomingHttpHeaders): boolean[] {
  const signed = {
    'webhook-id': headerText(headers, 'webhook-id'),
    'webhook-timestamp': headerText(headers, 'webhook-timestamp'),
    'webhook-signature': headerText(headers, 'webhook-signature'),
  };
  return secrets.map((secret) => {
    try {
      new Webhook(secret).verify(raw, signed);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Starts a receiver verifying with `secrets`; `answer(id, attempt)` decides each answer (a 2xx is
 * recorded in `received`). `port` reuses a port (a receiver coming back).
 */
export async function startReceiver(
  secrets: readonly string[],
  answer: (id: string, attempt: number) => Answer = () => ({ status: 204 }),
  port = 0,
): Promise<EventReceiver> {
  const received: ReceivedEvent[] = [];
  const attempts = new Map<string, number>();
  const timestamps = new Map<string, string[]>();
  let server: Server | undefined;
  let bound = port;
  const listen = async (): Promise<void> => {
    server = createServer((req, res) => {
      void readBody(req)
        .then((body) => {
          const raw = body.toString('utf8');
          const id = headerText(req.headers, 'webhook-id');
          const attempt = (attempts.get(id) ?? 0) + 1;
          attempts.set(id, attempt);
          timestamps.set(id, [...(timestamps.get(id) ?? []), headerText(req.headers, 'webhook-timestamp')]);
          const reply = answer(id, attempt);
          if (reply.status >= 200 && reply.status < 300) {
            const event = HTTP.toEvent({ headers: req.headers, body: raw }) as CloudEvent<
              Record<string, unknown>
            >;
            received.push({
              webhookId: id,
              timestamp: headerText(req.headers, 'webhook-timestamp'),
              verified: verifiedWith(secrets, raw, req.headers),
              event,
              raw,
              headers: req.headers,
            });
          }
          res.writeHead(reply.status, reply.headers ?? {}).end();
        })
        .catch(() => res.writeHead(500).end());
    });
    server.listen(bound, '127.0.0.1');
    await new Promise<void>((resolve) => server?.once('listening', resolve));
    bound = (server.address() as AddressInfo).port;
  };
  const down = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (s === undefined) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    received,
    attemptsOf: (id) => attempts.get(id) ?? 0,
    timestampsOf: (id) => timestamps.get(id) ?? [],
    down,
    up: listen,
    close: down,
  };
}
