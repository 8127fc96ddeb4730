/**
 * The reads of the Redis build registry: one record, or a batch of an index in order (a range of
 * a sorted set, then records and leases in one MGET). A queued record the queue lost ends as never
 * started; a running one without its lease stays while its replica beats or the queue keeps its
 * entry (the reap runs it again), else ends as lost by a read `lostAfterMs` after a first found it
 * so. Each by one script: the replica whose read ended a build tells of it (docs/redis.md).
 */
import type { RedisConnection } from '../redis/connection.js';
import { buildAliveKey, buildKey, buildUnleasedKey, replicaAliveKey } from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import type { Candidate, Position } from './build-pages.js';
import {
  ENDINGS_LUA,
  endingArgs,
  endingKeys,
  type EndingContext,
  LOST_BODY,
  NOT_STARTED_BODY,
  NOT_STARTED_STATUS,
} from './redis-build-endings.js';
import { queueHolding, queueRerunnable } from './redis-queue-holds.js';
import type { BuildEntry } from './records.js';

/**
 * A queued record this old that the queue no longer holds ends as never started (its replica
 * writes the record, then queues it: a moment apart, unless it stops or loses Redis between).
 */
const ORPHAN_MS = 30_000;
/**
 * A running record found without lease is ended only by a read this long after the first one
 * (its replica renews every third of a lease, and at once on reconnection); 4 times as long when
 * its replica still beats (it takes the lease again as soon as Redis answers, unless it no longer
 * runs the build: its finish never landed).
 */
const LOST_AFTER_MS = 7_500;
const BEATING_TIMES = 4;

/**
 * KEYS: endingKeys (status failure), the unleased mark. ARGV: endingArgs, what is lost (`queued`
 * or `running`), body json, answer status, ms between the first read and the one that ends a
 * running record, ms the mark lasts. Ends the record as lost when it still is what was read and
 * holds no lease (a running one: when the mark is old enough; the first such read sets it, the
 * lease taken again drops it); answers {record json, ids leaving the history}, or false.
 */
const LOSE = redisScript(`${ENDINGS_LUA}
local text = redis.call('GET', KEYS[1])
if not text or redis.call('EXISTS', KEYS[2]) == 1 then return false end
local entry = cjson.decode(text)
if entry.phase == 'finished' or (entry.phase == 'queued') ~= (ARGV[7] == 'queued') then return false end
if ARGV[7] == 'running' then
  local seen = redis.call('GET', KEYS[7])
  if not seen then
    redis.call('SET', KEYS[7], ARGV[1], 'PX', ARGV[11])
    return false
  end
  if tonumber(ARGV[1]) - tonumber(seen) < tonumber(ARGV[10]) then return false end
  redis.call('DEL', KEYS[7])
end
return {lose(entry, ARGV[8], tonumber(ARGV[9])), leaving()}
`);

type Calls = Pick<RedisConnection, 'call'>;

/** A record as Redis keeps it: a running one may carry who asked to cancel it, and its replica. */
export type StoredEntry = BuildEntry & { cancelledBy?: string; replica?: string };

/** A record read, and whether this read finished it (lost) and which ids then leave the history. */
export interface EntryRead {
  readonly entry: StoredEntry;
  readonly lostNow: boolean;
  readonly leaving: string[];
}

const parse = (text: string): StoredEntry => JSON.parse(text) as StoredEntry;

/**
 * Whether a record read with its lease (`alive`) may have to be ended as lost: `ask`, a queued
 * record old enough that the queue tells (lost when it no longer holds it); `running`, a running
 * one whose replica and the queue tell (lost when neither runs it).
 */
function lostAs(entry: StoredEntry, alive: boolean, nowMs: number): 'ask' | 'running' | undefined {
  if (alive || entry.phase === 'finished') return undefined;
  if (entry.phase !== 'queued') return 'running';
  return nowMs - entry.startedAtMs < ORPHAN_MS ? undefined : 'ask';
}

/** Ends `entry` as lost (`as`); the record as it stands after (another replica may have ended it). */
async function lose(
  connection: Calls,
  entry: StoredEntry,
  as: 'queued' | 'running' | 'beating',
  at: EndingContext,
): Promise<EntryRead | undefined> {
  const queued = as === 'queued';
  const afterMs = Math.round(at.lostAfterMs ?? LOST_AFTER_MS);
  const args = [
    ...endingArgs(entry.id, at),
    queued ? 'queued' : 'running',
    queued ? NOT_STARTED_BODY : LOST_BODY,
    queued ? NOT_STARTED_STATUS : 500,
    as === 'beating' ? BEATING_TIMES * afterMs : afterMs,
    2 * BEATING_TIMES * afterMs,
  ];
  const keys = [...endingKeys(entry.id, 'failure'), buildUnleasedKey(entry.id)];
  const ended = (await connection.call((client) => LOSE.run(client, keys, args))) as
    [string, string[]] | null;
  if (ended !== null) return { entry: parse(ended[0]), lostNow: true, leaving: ended[1] };
  if (queued) return readEntry(connection, entry.id, at);
  // Not ended yet (or by another read): the record as it stands, not settled again.
  const text = await connection.call((client) => client.get(buildKey(entry.id)));
  return text === null ? undefined : { entry: parse(text), lostNow: false, leaving: [] };
}

/**
 * Of running `entries` read without lease: those the queue keeps to run again (one transaction)
 * and those whose replica beats (one EXISTS per replica, each key in a slot of its own). O(entries).
 */
async function stillRun(
  connection: Calls,
  entries: readonly StoredEntry[],
): Promise<{ again: Set<string>; beating: Set<string> }> {
  if (entries.length === 0) return { again: new Set(), beating: new Set() };
  const replicas = [...new Set(entries.map((e) => e.replica).filter((r): r is string => r !== undefined))];
  const [again, beats] = await Promise.all([
    queueRerunnable(
      connection,
      entries.map((e) => e.id),
    ),
    Promise.all(
      replicas.map(async (r) => (await connection.call((c) => c.exists(replicaAliveKey(r)))) === 1),
    ),
  ]);
  const beating = new Set(replicas.filter((_, i) => beats[i] === true));
  return {
    again,
    beating: new Set(
      entries.filter((e) => e.replica !== undefined && beating.has(e.replica)).map((e) => e.id),
    ),
  };
}

/** A record read with whether its lease is held. */
export interface LeasedEntry {
  readonly entry: StoredEntry;
  readonly alive: boolean;
}

/**
 * Settles records read with their leases (a page's, in order): each as it is, or ended as lost by
 * this read. The queue is asked about the old queued ones and the running ones without lease
 * together (one round trip, O(records)), and the replicas of the latter whether they beat (one
 * EXISTS per replica); a record that is lost costs one script more (rare: its replica died).
 */
export async function settleAll(
  connection: Calls,
  reads: readonly LeasedEntry[],
  at: EndingContext,
): Promise<(EntryRead | undefined)[]> {
  const verdicts = reads.map(({ entry, alive }) => lostAs(entry, alive, at.nowMs));
  const asked = reads.filter((_, i) => verdicts[i] === 'ask').map(({ entry }) => entry.id);
  const unleased = reads.filter((_, i) => verdicts[i] === 'running').map(({ entry }) => entry);
  const [held, running] = await Promise.all([
    queueHolding(connection, asked),
    stillRun(connection, unleased),
  ]);
  const howLost = (id: string, verdict: 'ask' | 'running' | undefined) => {
    if (verdict === 'ask') return held.has(id) ? undefined : 'queued';
    if (verdict === undefined || running.again.has(id)) return undefined;
    return running.beating.has(id) ? 'beating' : 'running';
  };
  return Promise.all(
    reads.map(({ entry }, index) => {
      const as = howLost(entry.id, verdicts[index]);
      return as === undefined ? { entry, lostNow: false, leaving: [] } : lose(connection, entry, as, at);
    }),
  );
}

/** Settles one record read with its lease: as it is, or ended as lost by this read. */
async function settle(
  connection: Calls,
  entry: StoredEntry,
  alive: boolean,
  at: EndingContext,
): Promise<EntryRead | undefined> {
  return (await settleAll(connection, [{ entry, alive }], at))[0];
}

/** The record of build `id` (running or kept finished), settled. */
export async function readEntry(
  connection: Calls,
  id: string,
  at: EndingContext,
): Promise<EntryRead | undefined> {
  const [text, alive] = (await connection.call((client) => client.mget(buildKey(id), buildAliveKey(id)))) as [
    string | null,
    string | null,
  ];
  if (text === null) return undefined;
  return settle(connection, parse(text), alive !== null, at);
}

/** A candidate of an index with its record (if kept) and whether its lease is held. */
export type IndexedCandidate = Candidate & { readonly alive: boolean };

function positions(flat: readonly string[], after: Position | undefined): Position[] {
  const out: Position[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const position = { at: Number(flat[i + 1]), id: flat[i] as string };
    // The range starts at the cursor's time: the ids at that time up to the cursor's are behind it.
    if (after !== undefined && position.at === after.at && position.id >= after.id) continue;
    out.push(position);
  }
  return out;
}

/** Up to `count` ids of the index `key` after `after`, newest first: O(log n + count) per range. */
async function rangeAfter(
  connection: Calls,
  key: string,
  after: Position | undefined,
  count: number,
): Promise<Position[]> {
  const max = after === undefined ? '+inf' : String(after.at);
  const found: Position[] = [];
  for (let offset = 0; ;) {
    const wanted = count - found.length + 8;
    const flat = (await connection.call((client) =>
      client.zrange(key, max, '-inf', 'BYSCORE', 'REV', 'LIMIT', offset, wanted, 'WITHSCORES'),
    )) as string[];
    found.push(...positions(flat, after));
    if (found.length >= count || flat.length < wanted * 2) return found.slice(0, count);
    offset += wanted;
  }
}

/**
 * Up to `count` candidates of the index `key` after `after`, with their records and leases (one
 * MGET); ids whose record is gone (expired) are dropped from this index on the way.
 */
export async function readCandidates(
  connection: Calls,
  key: string,
  after: Position | undefined,
  count: number,
): Promise<IndexedCandidate[]> {
  const found = await rangeAfter(connection, key, after, count);
  if (found.length === 0) return [];
  const keys = found.flatMap((p) => [buildKey(p.id), buildAliveKey(p.id)]);
  const texts = (await connection.call((client) => client.mget(...keys))) as (string | null)[];
  const gone = found.filter((_, i) => texts[2 * i] === null).map((p) => p.id);
  if (gone.length > 0) await connection.call((client) => client.zrem(key, ...gone));
  return found.map((position, at) => {
    const text = texts[2 * at];
    return {
      position,
      alive: texts[2 * at + 1] !== null,
      ...(text === null || text === undefined ? {} : { entry: parse(text) }),
    };
  });
}
