import test from 'ava';
import { readFile } from 'node:fs/promises';
import { EXIT, EXIT_CODES, exitForStatus } from '../../../../src/client/exit-codes.js';

test('HTTP statuses map to the exit codes of the table', (t) => {
  t.is(exitForStatus(200), EXIT.ok);
  for (const status of [400, 401, 403, 404, 413]) t.is(exitForStatus(status), EXIT.refused, String(status));
  t.is(exitForStatus(429), EXIT.busy);
  t.is(exitForStatus(500), EXIT.failed);
  for (const status of [0, 301, 502, 503]) t.is(exitForStatus(status), EXIT.unreachable, String(status));
});

test('every code is in the table once, and docs/ci.md documents each', async (t) => {
  t.deepEqual(
    EXIT_CODES.map((e) => e.code),
    Object.values(EXIT),
  );
  const doc = await readFile(new URL('../../../../docs/ci.md', import.meta.url), 'utf8');
  for (const { code } of EXIT_CODES)
    t.regex(doc, new RegExp(`^\\| ${code} +\\|`, 'm'), `exit ${code} in docs/ci.md`);
});
