import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { hourOf, retentionMs } from '../../../../src/usage/buckets.js';
import { COUNTERS } from '../../../../src/usage/counters.js';
import { FileUsageStore, USAGE_FILE } from '../../../../src/usage/file-store.js';
import type { UsageWrite } from '../../../../src/usage/store.js';

const NOW = Date.parse('2026-11-20T10:30:00Z');
const ROW = JSON.stringify(['team-a', 'g/team-a/x', 'api']);
const write = (id: string, runSeconds: number, at = NOW): UsageWrite => ({
  buildId: id,
  hour: hourOf(at),
  rowId: ROW,
  vector: COUNTERS.map(({ name }) => (name === 'builds' ? 1 : name === 'runSeconds' ? runSeconds : 0)),
  tenant: 'team-a',
  month: '2026-11',
  runSeconds,
  madeImage: { refs: ['key:k1'], runSeconds },
  ranSteps: [{ id: 's1', seconds: 2.5 }],
});

test('a build counts once; its usage, times and month survive a restart; old buckets go', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-test-usage-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new FileUsageStore(dir, retentionMs(400), () => NOW);
  t.deepEqual(await store.add(write('b1', 30)), { counted: true, monthRunSeconds: 30 });
  t.deepEqual(await store.add(write('b1', 30)), { counted: false, monthRunSeconds: 30 });
  await store.add(write('b2', 12));
  await store.add(write('old', 99, NOW - retentionMs(401)));
  // A line cut short by a crash is skipped.
  await appendFile(join(dir, USAGE_FILE), '{"t":"build","w":{"bui');
  const again = new FileUsageStore(dir, retentionMs(400), () => NOW);
  const rows = await again.read(hourOf(NOW), hourOf(NOW) + 1);
  t.is(rows.length, 1);
  t.deepEqual([rows[0]?.vector[0], rows[0]?.vector[4]], [2, 42]);
  t.is(await again.monthRunSeconds('team-a', '2026-11'), 42);
  t.deepEqual(await again.savedTimes(['key:none', 'key:k1'], ['s1', 's2']), {
    image: 12,
    steps: [2.5, undefined],
  });
  t.deepEqual(await again.read(hourOf(NOW - retentionMs(401)), hourOf(NOW - retentionMs(401)) + 1), []);
  // Compacted: one line per row and per time.
  t.is((await readFile(join(dir, USAGE_FILE), 'utf8')).trim().split('\n').length, 3);
});
