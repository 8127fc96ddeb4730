/**
 * The usage in Redis, shared by every replica (docs/usage.md): one hash per hour (row id -> packed
 * counters), one per month (tenant -> run seconds), the made images' and ran steps' times, and a
 * marker per counted build. A build's usage is written by one script that sets the build's marker
 * and adds in the same atomic step, so a build counts once whichever replica ends it. Every key
 * is given in KEYS and shares the hash tag `{usage}` (Redis Cluster: one slot).
 */
import type { RedisConnection } from '../redis/connection.js';
import {
  usageCountedKey,
  usageDayKey,
  usageHourKey,
  usageImageKey,
  usageMonthKey,
  usageStepKey,
} from '../redis/keys.js';
import { redisScript } from '../redis/script.js';
import {
  dayIndexOf,
  hourStartMs,
  monthBounds,
  retentionMs,
  rowKeyReader,
  spansOf,
  type BucketRow,
} from './buckets.js';
import { packVector, unpackVector } from './counters.js';
import type { UsageStore, UsageWrite, WriteResult } from './store.js';

/** How long a build's marker outlives its write: longer than any build's record is ended twice. */
const COUNTED_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * KEYS: marker, hour hash, day hash, month hash, then the image keys, then the step keys.
 * ARGV: marker ttl, row id, packed counters, hour expiry (ms), day expiry (ms), tenant, run
 * seconds, month expiry (ms), image seconds, image key count, times ttl, then each step's seconds.
 */
const ADD = redisScript(`
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return {0, redis.call('HGET', KEYS[4], ARGV[6]) or '0'}
end
local add = {}
for n in string.gmatch(ARGV[3], '[^,]+') do add[#add + 1] = tonumber(n) end
local function added(key, expireAt)
  local sum = {}
  for i = 1, #add do sum[i] = add[i] end
  local old = redis.call('HGET', key, ARGV[2])
  if old then
    local i = 1
    for n in string.gmatch(old, '[^,]+') do
      sum[i] = (sum[i] or 0) + tonumber(n)
      i = i + 1
    end
  end
  local parts = {}
  for i = 1, #sum do parts[i] = string.format('%.17g', sum[i]) end
  redis.call('HSET', key, ARGV[2], table.concat(parts, ','))
  redis.call('PEXPIREAT', key, expireAt)
end
added(KEYS[2], ARGV[4])
added(KEYS[3], ARGV[5])
local total = redis.call('HINCRBYFLOAT', KEYS[4], ARGV[6], ARGV[7])
redis.call('PEXPIREAT', KEYS[4], ARGV[8])
local images = tonumber(ARGV[10])
for i = 1, images do redis.call('SET', KEYS[4 + i], ARGV[9], 'PX', ARGV[11]) end
for j = 5 + images, #KEYS do redis.call('SET', KEYS[j], ARGV[7 + j - images], 'PX', ARGV[11]) end
return {1, total}
`);

export class RedisUsageStore implements UsageStore {
  readonly #redis: Pick<RedisConnection, 'call'>;
  readonly #retentionMs: number;

  constructor(redis: Pick<RedisConnection, 'call'>, retentionDays: number) {
    this.#redis = redis;
    this.#retentionMs = retentionMs(retentionDays);
  }

  async savedTimes(
    imageRefs: readonly string[],
    stepIds: readonly string[],
  ): Promise<{ image?: number; steps: (number | undefined)[] }> {
    const keys = [...imageRefs.map(usageImageKey), ...stepIds.map(usageStepKey)];
    if (keys.length === 0) return { steps: [] };
    const values = await this.#redis.call((client) => client.mget(...keys));
    const numbers = values.map((value) => (value === null ? undefined : Number(value)));
    const image = numbers.slice(0, imageRefs.length).find((s) => s !== undefined);
    return { ...(image === undefined ? {} : { image }), steps: numbers.slice(imageRefs.length) };
  }

  async add(write: UsageWrite): Promise<WriteResult> {
    const images = write.madeImage?.refs ?? [];
    const keys = [
      usageCountedKey(write.buildId),
      usageHourKey(write.hour),
      usageDayKey(dayIndexOf(write.hour)),
      usageMonthKey(write.month),
      ...images.map(usageImageKey),
      ...write.ranSteps.map((step) => usageStepKey(step.id)),
    ];
    const monthEnd = monthBounds(hourStartMs(write.hour)).end;
    const args = [
      COUNTED_TTL_MS,
      write.rowId,
      packVector(write.vector),
      hourStartMs(write.hour + 1) + this.#retentionMs,
      hourStartMs((dayIndexOf(write.hour) + 1) * 24) + this.#retentionMs,
      write.tenant,
      String(write.runSeconds),
      monthEnd + this.#retentionMs,
      String(write.madeImage?.runSeconds ?? 0),
      images.length,
      this.#retentionMs,
      ...write.ranSteps.map((step) => String(step.seconds)),
    ];
    const [counted, total] = (await this.#redis.call((client) => ADD.run(client, keys, args))) as [
      number,
      string,
    ];
    return { counted: counted === 1, monthRunSeconds: Number(total) };
  }

  async read(fromHour: number, toHour: number): Promise<BucketRow[]> {
    const spans = spansOf(fromHour, toHour);
    if (spans.length === 0) return [];
    const answers = await this.#redis.call(async (client) => {
      const pipeline = client.pipeline();
      for (const span of spans)
        pipeline.hgetall(span.kind === 'day' ? usageDayKey(span.index) : usageHourKey(span.index));
      return (await pipeline.exec()) ?? [];
    });
    const out: BucketRow[] = [];
    const keyOf = rowKeyReader();
    answers.forEach(([err, value], index) => {
      if (err !== null) throw err;
      const hour = spans[index]?.hour ?? 0;
      for (const [id, packed] of Object.entries(value as Record<string, string>)) {
        const key = keyOf(id);
        if (key !== undefined) out.push({ ...key, hour, vector: unpackVector(packed) });
      }
    });
    return out;
  }

  async monthRunSeconds(tenant: string, month: string): Promise<number> {
    const value = await this.#redis.call((client) => client.hget(usageMonthKey(month), tenant));
    return value === null ? 0 : Number(value);
  }

  async close(): Promise<void> {
    // The connection is the stores' (src/stores.ts closes it).
  }
}
