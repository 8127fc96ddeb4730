// The tests' one /metrics reader (test/helpers/metrics.ts) against prom-client's own registry: every
// sample prom-client holds is read back from its text exposition with the same labels and value.
import test from 'ava';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseMetrics, sampleValue } from '../../helpers/metrics.js';

test('every sample of a prom-client registry reads back from its exposition', async (t) => {
  const registry = new Registry();
  const counter = new Counter({
    name: 't_total',
    help: 'a "quoted" help',
    labelNames: ['kind'],
    registers: [registry],
  });
  counter.inc({ kind: 'plain' }, 3);
  counter.inc({ kind: 'back\\slash "quote"\nnewline' }, 2);
  new Gauge({ name: 't_gauge', help: 'g', registers: [registry] }).set(-1.5);
  const histogram = new Histogram({ name: 't_seconds', help: 'h', buckets: [1, 10], registers: [registry] });
  histogram.observe(0.5);
  histogram.observe(20);

  const parsed = parseMetrics(await registry.metrics());
  const expected = (await registry.getMetricsAsJSON()).flatMap((family) =>
    family.values.map((v) => ({
      name: (v as { metricName?: string }).metricName ?? family.name,
      labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])),
      value: v.value,
    })),
  );
  t.deepEqual(
    [...parsed.samples].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    expected.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  );
  t.is(parsed.types.get('t_seconds'), 'histogram');
  t.is(sampleValue(parsed, 't_total', { kind: 'back\\slash "quote"\nnewline' }), 2);
  t.is(sampleValue(parsed, 't_seconds_bucket', { le: '+Inf' }), 2);
  t.is(sampleValue(parsed, 't_total'), undefined, 'labels must match exactly');
});

test('a line that is not a sample is refused, not skipped', (t) => {
  t.true(Number.isNaN(sampleValue(parseMetrics('t_lag Nan\n'), 't_lag')), "prom-client's NaN");
  t.throws(() => parseMetrics('t_total{kind="x" 1\n'), { message: /unterminated labels/ });
  t.throws(() => parseMetrics('t_total one\n'), { message: /not a sample value/ });
  t.throws(() => parseMetrics('{kind="x"} 1\n'), { message: /not a sample line/ });
});
