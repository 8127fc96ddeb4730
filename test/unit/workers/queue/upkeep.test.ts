// The queue's upkeep runs a build again only once reaps in a row found it lost with its replica:
// two when the replica stopped beating, four when it still beats (it takes its leases again as
// soon as Redis answers, unless it no longer runs the build); a build found running again is
// forgotten. A fake store stands for the queue (the scripts have their own tests).
import test from 'ava';
import type { LostRun, QueueStore, Reaped } from '../../../../src/queue/types.js';
import { startUpkeep } from '../../../../workers/queue/upkeep.js';
import { eventually } from '../../../helpers/eventually.js';
import { silentLogger } from '../../../helpers/silent-logger.js';

/** Runs the upkeep over `answers` (one reap each, then nothing lost); the runs it confirmed, by reap. */
async function confirmedOver(answers: readonly LostRun[][]): Promise<string[][]> {
  let reaps = 0;
  const confirmed: string[][] = [];
  const store: Pick<QueueStore, 'heartbeat' | 'reap'> = {
    heartbeat: async () => undefined,
    reap: async (): Promise<Reaped> => {
      reaps += 1;
      confirmed.push([]);
      return { dropped: [], lost: [...(answers[reaps - 1] ?? [])] };
    },
  };
  const stop = startUpkeep({
    store,
    shared: true,
    kick: () => undefined,
    reaped: async () => undefined,
    lost: async (runs) => void confirmed.at(-1)?.push(...runs.map((r) => r.id)),
    logger: silentLogger(),
    now: Date.now,
    intervalMs: 5,
  });
  await eventually(async () => reaps > answers.length, { interval: 5, what: 'every reap' });
  stop();
  return confirmed.slice(0, answers.length);
}

const dead: LostRun = { id: 'dead-run', replica: 'dead', beating: false };
const live: LostRun = { id: 'live-run', replica: 'live', beating: true };

test('a build of a replica that stopped beating runs again at the second reap in a row', async (t) => {
  t.deepEqual(await confirmedOver([[dead], [dead], [dead]]), [[], ['dead-run'], ['dead-run']]);
});

test('a build of a replica that beats runs again only at the fourth reap in a row', async (t) => {
  t.deepEqual(await confirmedOver([[live], [live], [live], [live]]), [[], [], [], ['live-run']]);
});

test('a build found running between two reaps starts its count again', async (t) => {
  t.deepEqual(await confirmedOver([[dead], [], [dead], [dead]]), [[], [], [], ['dead-run']]);
});
