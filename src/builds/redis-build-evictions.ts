/**
 * Finished builds leaving the Redis history (beyond `build.history`, or finished more than
 * `build.historyDays` ago): their records, their index entries and their logs' owner keys, read
 * first so that the script that removes them is given every key it touches. At most EVICT_BATCH
 * ids per finish (src/builds/redis-build-endings.ts): the cost of a finish never grows with the
 * history.
 */
import type { RedisConnection } from '../redis/connection.js';
import { buildIndexKey, buildKey, FINISHED_BUILDS, logOwnerKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import { indexedValues, type BuildEntry } from './records.js';

/**
 * KEYS: finished, then for each id its record, its indexes and its logs' owner keys. ARGV: for
 * each id: id, index count, owner key count. An id still among the finished leaves: its record
 * and index entries go, and its owner keys while they name it. Answers how many left.
 */
const EVICT = redisScript(`
local k, left = 2, 0
for i = 1, #ARGV, 3 do
  local id, indexes, owners = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZREM', KEYS[1], id)
    redis.call('DEL', KEYS[k])
    for j = 1, indexes do redis.call('ZREM', KEYS[k + j], id) end
    for j = 1, owners do
      local key = KEYS[k + indexes + j]
      if redis.call('GET', key) == id then redis.call('DEL', key) end
    end
    left = left + 1
  end
  k = k + 1 + indexes + owners
end
return left
`);

type Calls = Pick<RedisConnection, 'call'>;

/** The keys an entry is found by (an expired record: the index of every build only). */
function keysOf(entry: BuildEntry | undefined): { indexes: string[]; owners: string[] } {
  const all = buildIndexKey('all');
  if (entry === undefined) return { indexes: [all], owners: [] };
  const logs = [entry.gitCloneLogId, entry.imageBuildLogId].filter((v) => v !== undefined);
  return {
    indexes: [all, ...indexedValues(entry).map(([field, value]) => buildIndexKey(field, value))],
    owners: logs.map(logOwnerKey),
  };
}

/** Removes the finished builds `ids` from the history (ids no longer there are skipped). */
export async function evict(connection: Calls, ids: readonly string[]): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  const texts = (await connection.call((client) => client.mget(...unique.map(buildKey)))) as (
    string | null
  )[];
  const keys: string[] = [FINISHED_BUILDS];
  const args: (string | number)[] = [];
  unique.forEach((id, at) => {
    const text = texts[at];
    const { indexes, owners } = keysOf(
      typeof text === 'string' ? (JSON.parse(text) as BuildEntry) : undefined,
    );
    keys.push(buildKey(id), ...indexes, ...owners);
    args.push(id, indexes.length, owners.length);
  });
  await connection.call((client) => EVICT.run(client, keys, args));
}
