/**
 * The answered commits of Redis mode (answered-commits.ts), shared by every replica: one hash per
 * request shape, commit -> JSON, expiring a week after its last answer, trimmed to the newest few.
 * A replica that answers a commit is then answered from by all of them.
 */
import type { RedisConnection } from '../../src/redis/connection.js';
import { answeredKey } from '../../src/redis/keys.js';
import {
  MAX_COMMITS_PER_SHAPE,
  newest,
  parseAnswered,
  type AnsweredCommit,
  type AnsweredCommits,
} from './answered-commits.js';

/** A request shape not answered for this long is forgotten. */
const TTL_SECONDS = 7 * 24 * 3600;

export function createRedisAnsweredCommits(connection: Pick<RedisConnection, 'call'>): AnsweredCommits {
  const read = async (shape: string): Promise<Map<string, AnsweredCommit>> => {
    const fields = await connection.call((client) => client.hgetall(answeredKey(shape)));
    const out = new Map<string, AnsweredCommit>();
    for (const [commit, text] of Object.entries(fields)) {
      const answer = parseAnswered(text);
      if (answer !== undefined && answer.commit === commit) out.set(commit, answer);
    }
    return out;
  };
  return {
    get: read,
    async set(shape, answer) {
      const key = answeredKey(shape);
      const [[, size] = []] =
        (await connection.call((client) =>
          client
            .multi()
            .hlen(key)
            .hset(key, answer.commit, JSON.stringify(answer))
            .expire(key, TTL_SECONDS)
            .exec(),
        )) ?? [];
      if (typeof size !== 'number' || size < MAX_COMMITS_PER_SHAPE) return;
      const kept = new Set(newest((await read(shape)).values()).map((a) => a.commit));
      const all = await connection.call((client) => client.hkeys(key));
      const gone = all.filter((commit) => !kept.has(commit));
      if (gone.length > 0) await connection.call((client) => client.hdel(key, ...gone));
    },
    async forget(shape, commit) {
      await connection.call((client) => client.hdel(answeredKey(shape), commit));
    },
  };
}
