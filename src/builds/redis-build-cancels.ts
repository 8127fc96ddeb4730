/**
 * Cancelling a build in Redis mode: any replica marks the record as asked to cancel and tells every
 * replica on one channel; the replica running it hears, reads its own builds' records and tells
 * its listener of each build asked to cancel, once.
 */
import type { RedisConnection } from '../redis/connection.js';
import { BUILD_CANCEL_CHANNEL, buildKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { SubscriptionHub } from '../redis/subscriptions.js';
import type { StoredEntry } from './redis-build-reads.js';

/** KEYS: build. ARGV: by, cancel channel. Marks a running record as asked to cancel, and tells every replica. */
const CANCEL = redisScript(`
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local entry = cjson.decode(text)
entry.cancelledBy = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(entry))
redis.call('PUBLISH', ARGV[2], 'c')
return 1
`);

/** Asks the replica running build `id` to cancel it (a record no longer running is left as it is). */
export async function requestCancel(
  connection: Pick<RedisConnection, 'call'>,
  id: string,
  by: string,
): Promise<void> {
  await connection.call((client) => CANCEL.run(client, [buildKey(id)], [by, BUILD_CANCEL_CHANNEL]));
}

export interface CancelListening {
  readonly hub: SubscriptionHub;
  /** The builds this replica runs, read again at each cancel heard. */
  readonly own: () => Iterable<string>;
  readonly read: (id: string) => Promise<StoredEntry | undefined>;
  /** Ends the listening (the process is ending). */
  readonly signal: AbortSignal;
}

/** Hears every cancel asked for; each of this replica's builds asked to be cancelled is told once. */
export async function listenForCancels(
  { hub, own, read, signal }: CancelListening,
  listener: (id: string, by: string) => void,
): Promise<void> {
  const told = new Set<string>();
  const sub = await hub.subscribe(BUILD_CANCEL_CHANNEL);
  try {
    for (let seen = sub.version(); !signal.aborted; seen = sub.version()) {
      for (const id of own()) {
        const entry = await read(id).catch(() => undefined);
        if (entry?.cancelledBy !== undefined && !told.has(id)) {
          told.add(id);
          listener(id, entry.cancelledBy);
        }
      }
      await sub.changeSince(seen, signal);
    }
  } finally {
    sub.release();
  }
}
