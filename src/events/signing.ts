/**
 * Standard Webhooks signing: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with each
 * secret's key (the base64 after `whsec_`), space-separated, so that a receiver that knows any one
 * of them verifies (key rotation).
 */
import { createHmac } from 'node:crypto';

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

const keyOf = (secret: string): Buffer => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  return createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** The headers of one attempt, signed at `now` (seconds since the epoch). */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  now: number = Math.floor(Date.now() / 1000),
): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(now),
    'webhook-signature': secrets.map((secret) => `v1,${signatureOf(secret, id, now, body)}`).join(' '),
  };
}
