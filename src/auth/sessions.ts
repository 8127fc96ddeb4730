/**
 * Where people's sessions are kept (docs/auth.md): by the HMAC of the session id, never the id,
 * each until its end. In memory for one instance; in Redis (redis-sessions.ts) so every replica
 * knows every session. Each operation is O(1); the memory store drops ended sessions as it goes.
 */
import { randomBytes } from 'node:crypto';

/** What a session holds: who signed in, never a token or the session id. */
export interface PersonSession {
  /** The configured issuer's name (rules name it) and its `iss`. */
  readonly issuerName: string;
  readonly issuer: string;
  readonly subject: string;
  /** The ID token's claims a rule may name (strings and lists of strings). */
  readonly claims: Readonly<Record<string, string | readonly string[]>>;
  /** When the session ends (ms since the epoch). */
  readonly endsAt: number;
}

export interface SessionStore {
  /** Keeps `session` under `digest` until its end. */
  put(digest: string, session: PersonSession): Promise<void>;
  /** The session under `digest`, unless it ended. */
  get(digest: string): Promise<PersonSession | undefined>;
  delete(digest: string): Promise<void>;
  /** The key of the HMACs: the same for every caller of this store (every replica in Redis mode). */
  hmacKey(): Promise<Buffer>;
}

export const HMAC_KEY_BYTES = 32;

/** One instance's sessions; a restart ends them. */
export function createMemorySessions(now: () => number = Date.now): SessionStore {
  const sessions = new Map<string, PersonSession>();
  const key = randomBytes(HMAC_KEY_BYTES);
  /** Drops the ended sessions at the head (the oldest): amortised O(1) per put. */
  const sweep = (): void => {
    for (const [digest, session] of sessions) {
      if (session.endsAt > now()) return;
      sessions.delete(digest);
    }
  };
  return {
    put(digest, session) {
      sweep();
      sessions.set(digest, session);
      return Promise.resolve();
    },
    get(digest) {
      const session = sessions.get(digest);
      if (session === undefined || session.endsAt > now()) return Promise.resolve(session);
      sessions.delete(digest);
      return Promise.resolve(undefined);
    },
    delete(digest) {
      sessions.delete(digest);
      return Promise.resolve();
    },
    hmacKey: () => Promise.resolve(key),
  };
}
