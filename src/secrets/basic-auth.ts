/**
 * Basic-auth encoding, the one place for `base64(user:password)`: HTTP `Authorization: Basic`
 * headers (registry, git over https), docker config `auth` fields, and the encoded form a
 * log must mask. Pure.
 */

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `base64(username:password)`, UTF-8. */
export const encodeBasicAuth = (username: string, password: string): string =>
  Buffer.from(`${username}:${password}`, 'utf8').toString('base64');

/** The `Authorization` header value. */
export const basicAuthHeader = (username: string, password: string): string =>
  `Basic ${encodeBasicAuth(username, password)}`;

/** The user name and password of an encoded pair, or undefined when it is not base64 of `user:password`. */
export function decodeBasicAuth(encoded: string): BasicCredentials | undefined {
  if (!BASE64.test(encoded)) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
