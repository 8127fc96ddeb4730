/**
 * BuildKit's steps read from its plain progress as a build log receives it: instructions only
 * (not BuildKit's internal vertices), cached or run, durations, errors, any cut of the text, and a
 * second build of the same log (vertex numbers start again) kept apart.
 */
import test from 'ava';
import { StepTracker } from '../../../../workers/builder/buildkit-steps.js';

const LOG = [
  '#0 building with "ibs" instance using remote driver',
  '#1 [internal] load build definition from Dockerfile',
  '#1 transferring dockerfile: 120B done',
  '#1 DONE 0.0s',
  '#2 [internal] load metadata for localhost:5000/base:1',
  '#2 DONE 0.2s',
  '#3 [1/3] FROM localhost:5000/base:1@sha256:abc',
  '#3 CACHED',
  '#4 [2/3] COPY a.txt /a.txt',
  '#4 CACHED',
  '#5 [3/3] RUN make',
  '#5 0.301 building <b>app</b>',
  '#5 DONE 1m2.5s',
  '#6 exporting to image',
  '#6 pushing layers 0.3s done',
  '#6 DONE 0.9s',
  '',
].join('\r\n');

test('each instruction once, cached or run, with its duration; internal vertices left out', (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const tracker = new StepTracker(() => (now += 1000));
  // Any cut of the text reads the same.
  for (let at = 0; at < LOG.length; at += 7) tracker.write(LOG.slice(at, at + 7));
  t.deepEqual(tracker.steps(), [
    {
      name: '[1/3] FROM localhost:5000/base:1@sha256:abc',
      cached: true,
      startedAt: '2026-01-01T00:00:03.000Z',
    },
    { name: '[2/3] COPY a.txt /a.txt', cached: true, startedAt: '2026-01-01T00:00:04.000Z' },
    { name: '[3/3] RUN make', cached: false, startedAt: '2026-01-01T00:00:05.000Z', durationMs: 62_500 },
  ]);
});

test('an error is kept with its step; a vertex shared by two stages is one step; a second build is kept apart', (t) => {
  const tracker = new StepTracker(() => 0);
  tracker.write(
    '#3 [1/2] FROM base\n#3 DONE 0.1s\n#4 [2/2] RUN false\n#4 ERROR: process "/bin/sh -c false" did not complete successfully: exit code: 1\n',
  );
  tracker.write('#1 [internal] load build definition from Dockerfile\n#1 DONE 0.0s\n');
  tracker.write('#3 [1/2] FROM other\n#3 [b 1/2] FROM other\n#3 CACHED\n#3 [1/2] FROM other\n');
  const steps = tracker.steps();
  t.deepEqual(
    steps.map((step) => [step.name, step.cached, step.durationMs, step.error]),
    [
      ['[1/2] FROM base', false, 100, undefined],
      [
        '[2/2] RUN false',
        false,
        undefined,
        'process "/bin/sh -c false" did not complete successfully: exit code: 1',
      ],
      ['[1/2] FROM other', true, undefined, undefined],
    ],
  );
});
