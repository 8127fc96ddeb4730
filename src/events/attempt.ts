/**
 * One delivery attempt: the event POSTed in CloudEvents structured mode, signed afresh (a new
 * `webhook-timestamp`, the same `webhook-id`), given 10 s for an answer. Redirects are not followed
 * (an answer like any other). The answer's body is read and dropped.
 */
import type { EventSubscription } from '../config/types.js';
import type { AttemptAnswer } from './outcome.js';
import { signedHeaders } from './signing.js';
import type { CloudEvent } from './types.js';

const ATTEMPT_TIMEOUT_MS = 10_000;
const CLOUDEVENTS_JSON = 'application/cloudevents+json; charset=utf-8';

export async function attemptDelivery(
  subscription: EventSubscription,
  event: CloudEvent,
  timeoutMs: number = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptAnswer> {
  const body = JSON.stringify(event);
  try {
    const res = await fetch(subscription.url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': CLOUDEVENTS_JSON,
        'user-agent': 'image-build-service-events',
        ...signedHeaders(subscription.secrets, event.id, body),
      },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { kind: 'status', status: res.status, retryAfter: res.headers.get('retry-after') };
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    return name === 'TimeoutError' || name === 'AbortError' ? { kind: 'timeout' } : { kind: 'unreachable' };
  }
}
