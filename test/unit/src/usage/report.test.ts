import test from 'ava';
import { hourOf, spansOf, type BucketRow } from '../../../../src/usage/buckets.js';
import { COUNTERS } from '../../../../src/usage/counters.js';
import { parseUsageQuery } from '../../../../src/usage/query.js';
import { usageCsv, usageReport } from '../../../../src/usage/report.js';
import { csvObjects } from '../../../helpers/usage-support.js';

const NOW = Date.parse('2026-11-20T10:30:00Z');
const vector = (builds: number, runSeconds: number): number[] =>
  COUNTERS.map(({ name }) => (name === 'builds' ? builds : name === 'runSeconds' ? runSeconds : 0));
const row = (tenant: string, repository: string, at: string, v: number[]): BucketRow => ({
  tenant,
  repository,
  trigger: 'api',
  hour: hourOf(Date.parse(at)),
  vector: v,
});

const BUCKETS = [
  row('team-a', 'g/team-a/x', '2026-11-01T01:00:00Z', vector(1, 10)),
  row('team-a', 'g/team-a/y', '2026-11-01T02:00:00Z', vector(2, 20)),
  row('team-a', 'g/team-a/x', '2026-11-02T01:00:00Z', vector(1, 5)),
  row('team,"b"', 'g/team,"b"/z', '2026-11-02T01:00:00Z', vector(3, 1.5)),
];

test('the default query is the current month, by tenant', (t) => {
  const q = parseUsageQuery({}, NOW);
  t.deepEqual([q.from, q.to, q.by], ['2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z', ['tenant']]);
  t.is(q.toHour - q.fromHour, 30 * 24);
});

test('bad parameters are named', (t) => {
  const codes = (query: Record<string, unknown>) => {
    try {
      parseUsageQuery(query, NOW);
      return 'accepted';
    } catch (err) {
      return (err as Error).message;
    }
  };
  t.regex(codes({ from: '2026-02-30' }), /from:/);
  t.regex(codes({ from: '2026-11-02', to: '2026-11-01' }), /to:/);
  t.regex(codes({ by: 'tenant,tenant' }), /by:/);
  t.regex(codes({ by: ['tenant', 'day'] }), /by:/);
  t.regex(codes({ colour: 'red' }), /no other parameter/);
  t.is(codes({ from: '2026-11-01T05:00:00Z', to: '2026-11-03', by: 'day,tenant' }), 'accepted');
});

test('rows group by tenant and the asked dimensions, and sum to the total', (t) => {
  const query = parseUsageQuery({ by: 'tenant,day' }, NOW);
  const report = usageReport(BUCKETS, query);
  t.deepEqual(
    report.rows.map((r) => [r.tenant, r.day, r.builds, r.runSeconds]),
    [
      ['team,"b"', '2026-11-02', 3, 1.5],
      ['team-a', '2026-11-01', 3, 30],
      ['team-a', '2026-11-02', 1, 5],
    ],
  );
  t.is(report.total.builds, 7);
  t.is(report.total.runSeconds, 36.5);
  const byRepository = usageReport(BUCKETS, parseUsageQuery({ by: 'repository' }, NOW));
  t.is(byRepository.rows.length, 3);
});

test('the CSV quotes what needs it and reads back to the same numbers', (t) => {
  const report = usageReport(BUCKETS, parseUsageQuery({ by: 'tenant,day' }, NOW));
  const text = usageCsv(report);
  t.true(text.startsWith('tenant,day,builds,reused,failed,queued_seconds,run_seconds,'));
  t.true(text.includes('"team,""b"""'));
  const objects = csvObjects(text);
  t.deepEqual(
    objects.map((o) => [o.tenant, o.day, Number(o.builds), Number(o.run_seconds)]),
    report.rows.map((r) => [r.tenant, r.day, r.builds, r.runSeconds]),
  );
});

test('a range reads whole days from their day buckets and its edges hour by hour', (t) => {
  const day = 20_000;
  const spans = spansOf(day * 24 - 2, (day + 2) * 24 + 1);
  t.deepEqual(
    spans.map((s) => `${s.kind}:${s.index}`),
    [
      `hour:${day * 24 - 2}`,
      `hour:${day * 24 - 1}`,
      `day:${day}`,
      `day:${day + 1}`,
      `hour:${(day + 2) * 24}`,
    ],
  );
  t.deepEqual(spansOf(5, 5), []);
});
