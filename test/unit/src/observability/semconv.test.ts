// The attribute names the service writes out (src/observability/semconv.ts, so that an idle service
// does not load the whole conventions package) are the package's own.
import test from 'ava';
import * as conventions from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import * as ours from '../../../../src/observability/semconv.js';

test('every attribute name equals the package constant of the same name', (t) => {
  const entries = Object.entries(ours);
  t.true(entries.length > 0);
  for (const [name, value] of entries) {
    const expected =
      (conventions as Record<string, unknown>)[name] ?? (incubating as Record<string, unknown>)[name];
    t.is<unknown, unknown>(value, expected, name);
  }
});
