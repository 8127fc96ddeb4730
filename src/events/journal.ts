/**
 * The journal of the mode and how often its loops look: embedded, a file in the scratch space
 * woken by the recordings of this instance; Redis, a stream any replica may have written, so
 * idle loops look every second.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RedisConnection } from '../redis/connection.js';
import { FileJournal } from './file-journal.js';
import type { LoopTiming } from './subscription-loop.js';
import type { EventJournal } from './types.js';

const EMBEDDED_TIMING: LoopTiming = { idlePollMs: 5000, ownerPollMs: 5000, maxWaitMs: 5000 };
const REDIS_TIMING: LoopTiming = { idlePollMs: 1000, ownerPollMs: 2000, maxWaitMs: 5000 };

export interface OpenedJournal {
  readonly journal: EventJournal;
  readonly timing: LoopTiming;
}

export async function openFileJournal(
  scratchDir: string,
  subscriptions: readonly string[],
): Promise<OpenedJournal> {
  return {
    journal: await FileJournal.open(join(scratchDir, 'events'), subscriptions),
    timing: EMBEDDED_TIMING,
  };
}

export async function openRedisJournal(
  connection: RedisConnection,
  subscriptions: readonly string[],
): Promise<OpenedJournal> {
  const { RedisJournal } = await import('./redis-journal.js');
  // This replica's consumer name in the delivery group: unique per process.
  const consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  return { journal: RedisJournal.open(connection, consumer, subscriptions), timing: REDIS_TIMING };
}
