/**
 * BuildKit's steps read from its plain progress as a build log receives it: instructions only
 * (not BuildKit's internal vertices), each once, cached or run, every one with a duration, errors,
 * any cut of the text, the Dev Containers CLI's time prefixes, names without the CLI's stage label
 * (a stage of the repository's kept apart), and a second build of the same log (vertex numbers
 * start again) kept apart.
 */
import test from 'ava';
import { StepTracker } from '../../../../workers/builder/buildkit-steps.js';
import { stepLabel } from '../../../../workers/builder/step-label.js';

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
      startedAt: '2026-01-01T00:00:01.000Z',
      durationMs: 0,
    },
    { name: '[2/3] COPY a.txt /a.txt', cached: true, startedAt: '2026-01-01T00:00:02.000Z', durationMs: 0 },
    { name: '[3/3] RUN make', cached: false, startedAt: '2026-01-01T00:00:03.000Z', durationMs: 62_500 },
  ]);
});

test('an error is kept with its step and timed; a vertex shared by two stages is one step; a second build is kept apart', (t) => {
  let now = 0;
  const tracker = new StepTracker(() => now);
  tracker.write('#3 [1/2] FROM base\n#3 DONE 0.1s\n#4 [2/2] RUN false\n');
  now = 750;
  tracker.write('#4 ERROR: process "/bin/sh -c false" did not complete successfully: exit code: 1\n');
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
        750,
        'process "/bin/sh -c false" did not complete successfully: exit code: 1',
      ],
      ['[1/2] FROM other', true, 0, undefined],
    ],
  );
});

/**
 * The img log of a real build (Dev Containers CLI 0.89.0, BuildKit through the stack's remote
 * builder) of a 6-instruction Dockerfile, as the service received it: the CLI's time prefix on
 * the pieces it passed on, some of them on a step's first line or its DONE line.
 */
const RECORDED = [
  '[2026-11-29T02:47:19.752Z] #0 building with "service-remote" instance using remote driver',
  '',
  '#1 [internal] load build definition from Dockerfile-with-features',
  '#1 transferring dockerfile: 369B 0.1s done',
  '#1 DONE 0.1s',
  '',
  '#2 [internal] load metadata for localhost:23832/dev/base:1',
  '#2 DONE 0.0s',
  '',
  '#3 [internal] load .dockerignore',
  '#3 transferring context: 0.0s',
  '',
  '[2026-11-29T02:47:19.888Z] #3 transferring context: 2B 0.1s done',
  '#3 DONE 0.1s',
  '',
  '#4 [dev_container_auto_added_stage_label 1/6] FROM localhost:23832/dev/base:1@sha256:9ba6',
  '#4 resolve localhost:23832/dev/base:1@sha256:9ba6 0.0s done',
  '#4 CACHED',
  '',
  '[2026-11-29T02:47:19.889Z] ',
  '#5 [internal] load build context',
  '',
  '[2026-11-29T02:47:20.131Z] #5 transferring context: 82B 0.1s done',
  '#5 DONE 0.1s',
  '',
  '#6 [dev_container_auto_added_stage_label 2/6] WORKDIR /app',
  '#6 DONE 0.1s',
  '',
  '[2026-11-29T02:47:20.140Z] #7 [dev_container_auto_added_stage_label 3/6] COPY app.txt /app/app.txt',
  '#7 DONE 0.0s',
  '',
  '#8 [dev_container_auto_added_stage_label 4/6] RUN echo one > /one',
  '',
  '[2026-11-29T02:47:20.156Z] #8 DONE 0.2s',
  '',
  '[2026-11-29T02:47:20.350Z] ',
  '#9 [dev_container_auto_added_stage_label 5/6] COPY extra.txt /app/extra.txt',
  '#9 DONE 0.0s',
  '',
  '#10 [dev_container_auto_added_stage_label 6/6] RUN cat /app/app.txt /app/extra.txt > /both',
  '',
  '[2026-11-29T02:47:20.391Z] #10 DONE 0.2s',
  '',
  '[2026-11-29T02:47:20.539Z] ',
  '#11 exporting to image',
  '#11 exporting layers 0.1s done',
  '#11 DONE 0.6s',
  '',
].join('\n');

test('a recorded 6-instruction build: six steps, each once, each timed, without the CLI stage label', (t) => {
  const tracker = new StepTracker(() => Date.parse('2026-11-29T02:47:20Z'));
  tracker.write(RECORDED);
  t.deepEqual(
    tracker.steps().map((step) => [step.name, step.stage, step.cached, step.durationMs]),
    [
      ['[1/6] FROM localhost:23832/dev/base:1@sha256:9ba6', undefined, true, 0],
      ['[2/6] WORKDIR /app', undefined, false, 100],
      ['[3/6] COPY app.txt /app/app.txt', undefined, false, 0],
      ['[4/6] RUN echo one > /one', undefined, false, 200],
      ['[5/6] COPY extra.txt /app/extra.txt', undefined, false, 0],
      ['[6/6] RUN cat /app/app.txt /app/extra.txt > /both', undefined, false, 200],
    ],
  );
});

test("a step's label: position, platform and a stage of the repository's kept; BuildKit's own vertices are no steps", (t) => {
  t.deepEqual(stepLabel('[builder 2/5] RUN make'), { name: '[2/5] RUN make', stage: 'builder' });
  t.deepEqual(stepLabel('[dev_container_auto_added_stage_label  3/12] COPY . /src'), {
    name: '[3/12] COPY . /src',
  });
  t.deepEqual(stepLabel('[linux/386 dev_container_auto_added_stage_label 2/6] RUN x'), {
    name: '[linux/386 2/6] RUN x',
  });
  t.deepEqual(stepLabel('[linux/amd64->linux/arm64 base 1/2] FROM a'), {
    name: '[linux/amd64->linux/arm64 1/2] FROM a',
    stage: 'base',
  });
  t.deepEqual(stepLabel('[dev_containers_target_stage 4/4] RUN echo'), {
    name: '[4/4] RUN echo',
    stage: 'dev_containers_target_stage',
  });
  t.is(stepLabel('[internal] load build context'), undefined);
  t.is(stepLabel('[auth] dev/base:pull token for localhost:5000'), undefined);
  t.is(stepLabel('exporting to image'), undefined);
});

test('a step still running when the steps are read counts its time so far', (t) => {
  let now = 1000;
  const tracker = new StepTracker(() => now);
  tracker.write('#5 [1/1] RUN sleep 100\n');
  now = 4000;
  t.is(tracker.steps()[0]?.durationMs, 3000);
});
