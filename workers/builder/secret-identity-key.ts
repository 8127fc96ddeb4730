/**
 * The key of the build secrets identity (secret-identity.ts): 32 random bytes made once and the same
 * on every replica, never shown. Redis mode: SET NX of a Redis key (the first replica's wins);
 * embedded: a 0600 file of the scratch space, created with `wx` (the first writer's wins). Read
 * once per process. A lost key (a new Redis, a wiped scratch space) only makes earlier layers miss.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RedisConnection } from '../../src/redis/connection.js';
import { SECRETS_IDENTITY_KEY } from '../../src/redis/keys.js';
import { serviceError } from '../../src/errors/errors.js';

/** Resolves the key (the same Buffer on every call of one process). */
export type SecretIdentityKey = () => Promise<Buffer>;

const KEY_BYTES = 32;
/** How long a build waits for a Redis connection still being made. */
const READY_WAIT_MS = 10_000;
const HEX_KEY = /^[0-9a-f]{64}$/;
/** The embedded key's file in the scratch space. */
export const KEY_FILE = 'build-secrets-identity.key';

function fromHex(text: string, where: string): Buffer {
  if (!HEX_KEY.test(text)) throw serviceError('SECRETS_IDENTITY_KEY_INVALID', { where });
  return Buffer.from(text, 'hex');
}

/** Asked once, then remembered; a failure is not remembered (the next build asks again). */
function remembered(resolve: () => Promise<Buffer>): SecretIdentityKey {
  let found: Promise<Buffer> | undefined;
  return () => {
    found ??= resolve().catch((err: unknown) => {
      found = undefined;
      throw err;
    });
    return found;
  };
}

export function scratchIdentityKey(scratchDir: string): SecretIdentityKey {
  const file = join(scratchDir, KEY_FILE);
  return remembered(async () => {
    try {
      await writeFile(file, randomBytes(KEY_BYTES).toString('hex'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return fromHex((await readFile(file, 'utf8')).trim(), file);
  });
}

export function redisIdentityKey(redis: Pick<RedisConnection, 'call'>): SecretIdentityKey {
  return remembered(async () => {
    const fresh = randomBytes(KEY_BYTES).toString('hex');
    const text = await redis.call(async (client) => {
      // Commands are not queued while Redis connects (a build may come first): wait for it, a while.
      if (client.status !== 'ready')
        await once(client, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) });
      await client.set(SECRETS_IDENTITY_KEY, fresh, 'NX');
      return client.get(SECRETS_IDENTITY_KEY);
    });
    return fromHex(text ?? '', `Redis (${SECRETS_IDENTITY_KEY})`);
  });
}
