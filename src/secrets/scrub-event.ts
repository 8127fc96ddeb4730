/**
 * Removes credentials from an error-tracking event before it leaves the process (pure).
 * Three nets: values under secret-looking keys (headers included), credentials embedded in
 * strings (URL userinfo, `Bearer`/`Basic` values), and the literal secrets of the server's own
 * configuration (git tokens, private keys, ambient registry passwords).
 */
import { MASK, maskSecrets } from './masking.js';

const REDACTED = MASK;

/** Keys whose value is a credential whatever it looks like (`X-Registry-Password`, `authorization`...). */
const SECRET_KEY =
  /pass(word|wd)?|token|secret|authorization|cookie|private[-_]?key|credential|api[-_]?key|^auth$|^dsn$/i;
/** Request parts that may carry a body or credentials: never sent. */
const DROPPED_REQUEST_FIELDS = ['data', 'cookies', 'query_string'];

export function scrubString(text: string, secretVariants: readonly string[]): string {
  return maskSecrets(text, secretVariants)
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, `$1${REDACTED}@`)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`);
}

function scrubValue(value: unknown, secretVariants: readonly string[], seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return scrubString(value, secretVariants);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secretVariants, seen));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : scrubValue(inner, secretVariants, seen);
  }
  return out;
}

/** A scrubbed copy of `event`, without breadcrumbs, request bodies, cookies or query strings. */
export function scrubEvent<E extends object>(event: E, secretVariants: readonly string[]): E {
  const copy = scrubValue(event, secretVariants, new WeakSet()) as Record<string, unknown>;
  delete copy.breadcrumbs;
  const request = copy.request as Record<string, unknown> | undefined;
  if (request !== undefined && typeof request === 'object') {
    for (const field of DROPPED_REQUEST_FIELDS) delete request[field];
  }
  return copy as E;
}
