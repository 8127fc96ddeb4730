// A short day of faults through three replicas, Redis and two builders (test/helpers/fault-day.ts),
// every fault once: a replica SIGKILLed with builds running and queued, Redis restarted, a builder
// stopped for 15 s (bench:faults: 30 s), the registry answering 503 for 10 s, polls cut mid-wait.
// Every accepted build ends with a true answer: nothing lost, no tag broken, every failure names
// its fault, a build.finished for every build, and ibs ends 0 through the transient faults. A tag
// pushed twice (the same content, pushed again after an outage) is counted and shown. Bounded to
// 5 minutes (1 to 1.5 on the loaded 2-core machine).
// Its storm mode (test/helpers/storm-day.ts), once per Redis that fails over: four replicas, 100
// builds queued, a rolling update of all four, the queue's Redis primary killed and its replica
// promoted, Redis at maxmemory for 20 s, a replica SIGKILLed; nothing lost, run twice, broken,
// undelivered or contradicted, every 503 with Retry-After. bench:faults -- --storm 500: in full.
import test from 'ava';
import { dayTable, runFaultDay, type DayReport } from '../helpers/fault-day.js';
import { stormBad, stormTable } from '../helpers/storm-count.js';
import { runStormDay } from '../helpers/storm-day.js';

const lostBuild = (r: DayReport, id: string): boolean =>
  /the build was lost: its replica \S+ stopped renewing/.test(
    String(r.sent.find((s) => s.id === id)?.record?.answer?.body.error),
  );

test('a day of faults: nothing lost or broken; every failure names its fault', async (t) => {
  t.timeout(5 * 60_000);
  const day = await runFaultDay({
    minBuilds: 12,
    everyMs: 2500,
    rounds: 1,
    builderStopMs: 15_000,
    registryOutageMs: 10_000,
    cutWindowMs: 6000,
    buildTimeoutSeconds: 120,
    log: (line) => t.log(line),
  });
  t.log(`\n${dayTable(day)}`);
  for (const f of day.faults) {
    const from = day.faults[0]?.startedAt ?? 0;
    t.log(
      `${f.fault}: ${((f.startedAt - from) / 1000).toFixed(1)} s to ${((f.endedAt - from) / 1000).toFixed(1)} s`,
    );
  }
  for (const line of day.failureDetails) t.log(line);
  t.true(day.accepted > 10, `${day.accepted} builds accepted`);
  t.true(day.success > 0);
  t.deepEqual(day.lost, [], 'lost');
  t.deepEqual(day.brokenTags, [], 'broken tags');
  for (const line of day.pushedTwice) t.log(`pushed twice: ${line}`);
  t.deepEqual(day.undelivered, [], 'undelivered build.finished events');
  t.deepEqual(day.otherFailures, [], 'failures naming no fault');
  t.deepEqual(day.ibsNotZero, [], 'ibs through a transient fault');
  t.deepEqual(day.contradicted, [], 'synchronous answers the record contradicts');
  // The builds the killed replica ran end naming it, each ended inside another replica's read of
  // the shared registry, which sends its build.finished (counted in `undelivered` above).
  t.true(day.killedRunning.length > 0);
  for (const id of day.killedRunning) t.true(lostBuild(day, id), `${id} ends as lost`);
});

for (const topology of ['cluster', 'sentinel'] as const) {
  test(`the storm day on a Redis ${topology} that fails over: nothing lost, run twice or broken`, async (t) => {
    t.timeout(8 * 60_000);
    const report = await runStormDay({
      builds: 100,
      topology,
      repositories: 8,
      memoryFullMs: 20_000,
      trickleMs: 1000,
      log: (line) => t.log(line),
    });
    t.log(`\n${stormTable(report)}`);
    for (const line of report.failureDetails) t.log(line);
    t.deepEqual(stormBad(report), [], 'lost, twice, broken, undelivered, ibs not 0, contradicted');
    t.true(report.accepted >= 100, `${report.accepted} builds accepted`);
    t.true(report.succeeded > 0);
    t.true(report.answered503 > 0, 'the faults were felt: some requests were answered 503');
  });
}
