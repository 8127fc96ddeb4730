import test from 'ava';
import type { BuildRecord } from '../../../../src/builds/types.js';
import { hourOf } from '../../../../src/usage/buckets.js';
import { meteringOf, stepId, usageRepository } from '../../../../src/usage/metering.js';

const ENDED = Date.parse('2026-11-20T10:30:00Z');

const record = (extra: Partial<BuildRecord> = {}): BuildRecord => ({
  id: 'b1',
  requestId: 'r1',
  repository: 'https://git.example.com/team-a/app.git',
  image: 'r.example/app',
  phase: 'finished',
  startedAt: new Date(ENDED - 40_000).toISOString(),
  elapsedSeconds: 30,
  durationSeconds: 30,
  waiters: 0,
  status: 'success',
  builder: 'tcp://b:1234',
  answer: { status: 200, body: { digest: 'sha256:aa' } },
  key: { key: 'k1', inputs: [] },
  ...extra,
});

test('the repository and tenant of a URL, an scp-like address, and no URL', (t) => {
  t.deepEqual(usageRepository('https://Git.Example.com:8443/team-a/app.git'), {
    repository: 'git.example.com/team-a/app',
    tenant: 'team-a',
  });
  t.deepEqual(usageRepository('git@git.example.com:team-b/x.git'), {
    repository: 'git.example.com/team-b/x',
    tenant: 'team-b',
  });
  t.is(usageRepository('not a url').tenant, 'unknown');
});

test('a build that ran: run and queue time, steps, pushed bytes, and what it keeps for later', (t) => {
  const m = meteringOf({
    endedAtMs: ENDED,
    record: record({
      trigger: 'push',
      steps: [
        { name: '[1/2] FROM base', cached: true, startedAt: '', durationMs: 5 },
        { name: '[2/2] RUN make', cached: false, startedAt: '', durationMs: 12_500 },
        { name: '[3/3] RUN broken', cached: false, startedAt: '', durationMs: 100, error: 'exit 1' },
      ],
      pushed: {
        digest: 'sha256:aa',
        platforms: [{ platform: 'linux/amd64', digest: 'x', compressedBytes: 1000 }],
      },
    }),
  });
  t.deepEqual(m.row, { tenant: 'team-a', repository: 'git.example.com/team-a/app', trigger: 'push' });
  t.is(m.hour, hourOf(ENDED));
  t.is(m.month, '2026-11');
  t.deepEqual(m.counters, {
    builds: 1,
    reused: 0,
    failed: 0,
    queuedSeconds: 10,
    runSeconds: 30,
    executedStepSeconds: 12.6,
    cachedSteps: 1,
    totalSteps: 3,
    pushedBytes: 1000,
  });
  t.deepEqual(m.reusedRefs, []);
  t.deepEqual(m.cachedStepIds, [stepId('git.example.com/team-a/app', '[1/2] FROM base')]);
  t.deepEqual(m.madeImage, { refs: ['key:k1', 'digest:sha256:aa'], runSeconds: 30 });
  // A step that failed is no measure of the step's time.
  t.deepEqual(m.ranSteps, [{ id: stepId('git.example.com/team-a/app', '[2/2] RUN make'), seconds: 12.5 }]);
});

test('a reuse looks its saving up by key and digest, and keeps nothing', (t) => {
  const m = meteringOf({ endedAtMs: ENDED, record: record({ durationSeconds: 1 }) });
  t.is(m.counters.reused, 1);
  t.is(m.row.trigger, 'api');
  t.deepEqual(m.reusedRefs, ['key:k1', 'digest:sha256:aa']);
  t.is(m.madeImage, undefined);
});

test('a failure counts as failed; one that ended while queued only waited', (t) => {
  const failed = meteringOf({ endedAtMs: ENDED, record: record({ status: 'failure', steps: [] }) });
  t.deepEqual([failed.counters.failed, failed.counters.reused, failed.counters.runSeconds], [1, 0, 30]);
  t.is(failed.madeImage, undefined);
  const { builder: _unplaced, ...queued } = record({ status: 'failure', durationSeconds: 40 });
  const unstarted = meteringOf({ endedAtMs: ENDED, record: queued });
  t.deepEqual([unstarted.counters.runSeconds, unstarted.counters.queuedSeconds], [0, 40]);
});
