/**
 * The pages' calls to the service's public JSON API: the same paths and answers a script uses,
 * with the caller's bearer token (kept in this tab's sessionStorage) on every call, or the
 * person's session cookie (and its CSRF token on calls that change something).
 */
import type { RebuiltBecause } from '../../builds/types.js';
import type { BuildTrigger } from '../../rules/build-classes.js';

const TOKEN_KEY = 'ibs.token';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** A person's sign-in with the organisation's provider (docs/auth.md), when the service offers it. */
export const people = { available: false, signedIn: false };
const SIGNED_OUT_KEY = 'ibs.signedOut';

/** Signed out on purpose in this tab: the pages ask instead of sending the person to the provider. */
export const signedOut = {
  get: (): boolean => sessionStorage.getItem(SIGNED_OUT_KEY) !== null,
  set: (): void => sessionStorage.setItem(SIGNED_OUT_KEY, '1'),
  clear: (): void => sessionStorage.removeItem(SIGNED_OUT_KEY),
};

/** Whether the service offers people's sign-in, and whether this browser has a session (GET /auth/session). */
export async function loadSession(): Promise<void> {
  const res = await fetch('/auth/session', { cache: 'no-store' });
  people.available = res.ok;
  people.signedIn = res.ok && ((await res.json()) as { signedIn?: unknown }).signedIn === true;
}

/** The provider's sign-in, coming back to `path`. */
export const signInHref = (path: string): string => `/auth/login?returnTo=${encodeURIComponent(path)}`;

/** The session's CSRF token (its cookie): sent back with every state-changing call (double submit). */
function csrfToken(): string | undefined {
  const found = document.cookie.split(';').find((part) => part.trim().startsWith('ibs_csrf='));
  return found?.trim().slice('ibs_csrf='.length);
}

/** Ends the person's session. */
export async function signOutPerson(): Promise<void> {
  const csrf = csrfToken();
  await fetch('/auth/logout', {
    method: 'POST',
    headers: csrf === undefined ? {} : { 'X-CSRF-Token': csrf },
  });
  people.signedIn = false;
}

/** The service refused the call for want of a (valid) token: the sign-in prompt answers it. */
export class SignInNeeded extends Error {}

/** Any other refusal: its status and the service's error text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function headers(method: string): Record<string, string> {
  const value = token.get();
  if (value !== null) return { Authorization: `Bearer ${value}` };
  const csrf = method === 'GET' ? undefined : csrfToken();
  return csrf === undefined ? {} : { 'X-CSRF-Token': csrf };
}

/** A call to the API; a 401 throws SignInNeeded, another non-2xx ApiError. */
export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase();
  const res = await fetch(path, {
    ...init,
    headers: { ...headers(method), ...init.headers },
    cache: 'no-store',
  });
  if (res.status === 401) throw new SignInNeeded('sign in');
  if (!res.ok && res.status !== 503) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = (await res.json()) as { error?: unknown };
      if (typeof body.error === 'string') message = body.error;
    } catch {
      // not JSON: the status says it
    }
    throw new ApiError(res.status, message);
  }
  return res;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await call(path, signal === undefined ? {} : { signal });
  return (await res.json()) as T;
}

interface PlatformBuilder {
  readonly builder: string;
  readonly platforms: readonly string[];
}

interface Stage {
  readonly name: string;
  readonly startedAt: string;
  readonly durationMs?: number;
}

interface Step {
  readonly name: string;
  readonly stage?: string;
  readonly cached: boolean;
  readonly startedAt?: string;
  readonly durationMs?: number;
  readonly error?: string;
}

/** The pushed image: its digest, and each platform's manifest and compressed layer bytes. */
interface Pushed {
  readonly digest: string;
  readonly platforms: readonly { platform: string; digest: string; compressedBytes: number }[];
}

interface KeyInfo {
  readonly key: string;
  readonly inputs: readonly { name: string; digest: string }[];
}

/**
 * A build as GET /builds and GET /builds/{id} answer it (fields a page shows): each field and its
 * parts are checked against docs/openapi.yaml's BuildRecord by test/unit/src/ui/pages-types.test.ts.
 */
export interface Build {
  readonly id: string;
  readonly requestId: string;
  readonly trigger?: BuildTrigger;
  readonly requestedBy?: { kind?: string; issuer?: string; subject?: string; name?: string };
  readonly repository: string;
  readonly tenant?: string;
  readonly branch?: string;
  readonly commit?: string;
  readonly image: string;
  readonly phase: string;
  readonly startedAt: string;
  readonly elapsedSeconds: number;
  readonly gitCloneLogId?: string;
  readonly imageBuildLogId?: string;
  readonly builder?: string;
  readonly builders?: readonly PlatformBuilder[];
  readonly waiters: number;
  readonly status?: string;
  readonly durationSeconds?: number;
  readonly error?: string;
  readonly answer?: { status: number; body: Record<string, unknown> };
  readonly stages?: readonly Stage[];
  readonly steps?: readonly Step[];
  readonly cachedSteps?: number;
  readonly totalSteps?: number;
  readonly pushed?: Pushed;
  readonly key?: KeyInfo;
  readonly rebuiltBecause?: RebuiltBecause;
}

/** `queued`, `running`, or how it ended. */
export const statusOf = (build: Build): string =>
  build.status ?? (build.phase === 'queued' ? 'queued' : 'running');

/** Who asked for a build, as one line of text. */
export function callerOf(build: Build): string {
  const by = build.requestedBy;
  if (by === undefined) return '';
  return [by.name, by.subject].filter((v) => typeof v === 'string' && v !== '').join(': ');
}
