/**
 * The cookies of people's sign-in (docs/auth.md), pure: the session id (`HttpOnly`), its CSRF
 * token (readable by the pages, sent back as `X-CSRF-Token`: double submit) and the sign-in under
 * way (`HttpOnly`, on /auth/ only, 10 minutes). `SameSite=Lax`; `Secure` unless the service is
 * plain http on a loopback address.
 */
export const SESSION_COOKIE = 'ibs_session';
export const CSRF_COOKIE = 'ibs_csrf';
export const SIGN_IN_COOKIE = 'ibs_sign_in';
export const CSRF_HEADER = 'x-csrf-token';
export const SIGN_IN_SECONDS = 600;

/** The value of cookie `name` in a Cookie header (the first one), or undefined. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  readonly secure: boolean;
  readonly httpOnly: boolean;
  readonly path: string;
  /** Seconds; 0 removes the cookie. */
  readonly maxAge: number;
}

/** A Set-Cookie header's value; `value` is base64url or empty (nothing to escape). */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${String(Math.max(0, Math.floor(options.maxAge)))}`,
    'SameSite=Lax',
    ...(options.httpOnly ? ['HttpOnly'] : []),
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
