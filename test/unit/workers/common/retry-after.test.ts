import test from 'ava';
import {
  estimateRetryAfter,
  RETRY_AFTER,
  type FinishedBuild,
  type RunningBuild,
} from '../../../../workers/common/retry-after.js';

const run = (repository: string, elapsedSeconds: number): RunningBuild => ({ repository, elapsedSeconds });
const done = (repository: string, durationSeconds: number): FinishedBuild => ({
  repository,
  durationSeconds,
});

const CASES: [string, RunningBuild[], FinishedBuild[], number][] = [
  ['no history at all: the default', [run('a', 10)], [], 30],
  ['no running build: the default', [], [done('a', 100)], 30],
  ['one build of the same repository: its remaining time', [run('a', 20)], [done('a', 100)], 80],
  [
    'the median of the repository, not the mean',
    [run('a', 0)],
    [done('a', 40), done('a', 60), done('a', 290)],
    60,
  ],
  ['an even sample: the middle two averaged', [run('a', 0)], [done('a', 40), done('a', 60)], 50],
  ['fractions round up', [run('a', 0.4)], [done('a', 50)], 50],
  [
    'the same repository wins over the others',
    [run('a', 0)],
    [done('b', 10), done('b', 10), done('a', 200)],
    200,
  ],
  [
    'an unknown repository: every repository',
    [run('c', 0)],
    [done('a', 40), done('b', 60), done('b', 80)],
    60,
  ],
  [
    'the soonest end among the running builds',
    [run('a', 10), run('b', 100)],
    [done('a', 120), done('b', 130)],
    30,
  ],
  ['overdue builds: the floor', [run('a', 500)], [done('a', 100)], 5],
  ['short builds: the floor', [run('a', 0)], [done('a', 1)], 5],
  ['long builds: the ceiling', [run('a', 0)], [done('a', 3600)], 300],
  [
    'only the latest 10 of a repository count (newest first)',
    [run('a', 0)],
    [...Array.from({ length: 10 }, () => done('a', 20)), ...Array.from({ length: 20 }, () => done('a', 250))],
    20,
  ],
];

for (const [title, running, succeeded, expected] of CASES) {
  test(`estimateRetryAfter: ${title}`, (t) => {
    const seconds = estimateRetryAfter(running, succeeded);
    t.is(seconds, expected);
    t.true(Number.isInteger(seconds) && seconds >= RETRY_AFTER.min && seconds <= RETRY_AFTER.max);
  });
}
