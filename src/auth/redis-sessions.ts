/**
 * People's sessions in Redis (docs/auth.md, docs/redis.md): one key per session,
 * `ibs:{session:<hmac of the id>}`, its JSON value without the id, expiring at the session's end;
 * the HMAC key is made once by whichever replica needs it first (SET NX). Each call is one O(1)
 * command.
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../redis/connection.js';
import { sessionKey, SESSIONS_HMAC_KEY } from '../redis/keys.js';
import { HMAC_KEY_BYTES, type PersonSession, type SessionStore } from './sessions.js';

/** How long a first call waits for a Redis connection still being made. */
const READY_WAIT_MS = 10_000;
const HEX_KEY = /^[0-9a-f]{64}$/;

export function createRedisSessions(
  redis: Pick<RedisConnection, 'call'>,
  now: () => number = Date.now,
): SessionStore {
  let key: Promise<Buffer> | undefined;
  const readKey = async (): Promise<Buffer> => {
    const fresh = randomBytes(HMAC_KEY_BYTES).toString('hex');
    const text = await redis.call(async (client) => {
      if (client.status !== 'ready')
        await once(client, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) });
      await client.set(SESSIONS_HMAC_KEY, fresh, 'NX');
      const kept = await client.get(SESSIONS_HMAC_KEY);
      if (kept !== null && HEX_KEY.test(kept)) return kept;
      // No usable key (written by something else): a fresh one; the sessions under the old one end.
      await client.set(SESSIONS_HMAC_KEY, fresh);
      return fresh;
    });
    return Buffer.from(text, 'hex');
  };
  return {
    async put(digest, session) {
      const ttl = Math.max(1, session.endsAt - now());
      await redis.call((client) => client.set(sessionKey(digest), JSON.stringify(session), 'PX', ttl));
    },
    async get(digest) {
      const text = await redis.call((client) => client.get(sessionKey(digest)));
      if (text === null) return undefined;
      const session = JSON.parse(text) as PersonSession;
      return session.endsAt > now() ? session : undefined;
    },
    async delete(digest) {
      await redis.call((client) => client.del(sessionKey(digest)));
    },
    hmacKey() {
      key ??= readKey().catch((err: unknown) => {
        key = undefined;
        throw err;
      });
      return key;
    },
  };
}
