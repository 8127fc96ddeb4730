/**
 * The webhook checks, in constant time, by the forge's scheme (src/rules/forges.ts): `hmac-sha256`,
 * the header holds `sha256=<hex>` of the raw body (GitHub, Gitea); `token`, the header holds the
 * secret itself (GitLab), compared through HMACs of equal length so neither its length nor its
 * bytes leak through timing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { FORGES, type Forge } from '../rules/forges.js';

const hmac = (key: string, data: Buffer | string): Buffer => createHmac('sha256', key).update(data).digest();

function validHubSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (match === null) return false;
  return timingSafeEqual(Buffer.from(match[1] ?? '', 'hex'), hmac(secret, body));
}

function validToken(secret: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  // Keyed by a per-check constant: equal-length digests of both sides.
  const key = 'gitlab-token-check';
  return timingSafeEqual(hmac(key, header), hmac(key, secret));
}

/** Whether the delivery carries the forge's valid signature (or token) for `body`. */
export function validHookSignature(
  forge: Forge,
  secret: string,
  body: Buffer,
  header: (name: string) => string | undefined,
): boolean {
  const { scheme, header: name } = FORGES[forge].signature;
  return scheme === 'token'
    ? validToken(secret, header(name))
    : validHubSignature(secret, body, header(name));
}
