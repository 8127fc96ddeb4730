/**
 * Benchmark (not a test): a longer day of faults on the real stack (test/helpers/fault-day.ts),
 * every fault twice, and the table: accepted, success, failure by cause, lost, pushed twice, broken
 * tags, undelivered events, and each fault's recovery time (from its end to the first build answered
 * successfully after it).
 *
 * With `--storm N` the storm day instead (test/helpers/storm-day.ts): four replicas, N builds
 * queued, a rolling update, a Redis failover, Redis at maxmemory for 20 s and a replica SIGKILLed,
 * once on a Redis Cluster with replicas and once through Redis Sentinel (`--topology cluster` or
 * `sentinel`: that one only); the table of each, and exit 1 when a bad count is not 0.
 *
 *   npm run stack -- up
 *   npx tsx bench/faults.ts [rounds=N]
 *   npm run bench:faults -- --storm 500 [--topology cluster|sentinel]
 */
import { dayTable, runFaultDay } from '../test/helpers/fault-day.js';
import { stormBad, stormTable } from '../test/helpers/storm-count.js';
import { runStormDay } from '../test/helpers/storm-day.js';

const argAfter = (flag: string): string | undefined => {
  const at = process.argv.indexOf(flag);
  return at < 0 ? undefined : process.argv[at + 1];
};
const storm = argAfter('--storm');
if (storm !== undefined) {
  const only = argAfter('--topology');
  let bad = 0;
  const kinds = ['cluster', 'sentinel'] as const;
  for (const topology of kinds.filter((kind) => only === undefined || only === kind)) {
    const started = Date.now();
    const report = await runStormDay({
      builds: Number(storm),
      topology,
      repositories: 8,
      memoryFullMs: 20_000,
      trickleMs: 500,
      log: (line) => console.error(`${new Date().toISOString()} ${line}`),
    });
    console.log(
      `\nstorm day, ${storm} builds, Redis ${topology}: ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    console.log(stormTable(report));
    for (const line of stormBad(report)) console.log(line);
    for (const line of report.failureDetails) console.log(`failure: ${line}`);
    bad += stormBad(report).length;
  }
  process.exit(bad > 0 ? 1 : 0);
}

const rounds = Number(/^rounds=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? '2');
const report = await runFaultDay({
  minBuilds: 40,
  everyMs: 2000,
  rounds,
  builderStopMs: 30_000,
  registryOutageMs: 10_000,
  cutWindowMs: 15_000,
  buildTimeoutSeconds: 300,
  log: (line) => console.error(line),
});
console.log(dayTable(report));
for (const [what, list] of [
  ['lost', report.lost],
  ['pushed twice', report.pushedTwice],
  ['broken tags', report.brokenTags],
  ['undelivered', report.undelivered],
  ['failures naming no fault', report.otherFailures],
  ['ibs not 0', report.ibsNotZero],
] as const) {
  for (const line of list) console.log(`${what}: ${line}`);
}
process.exitCode = report.lost.length + report.brokenTags.length + report.undelivered.length > 0 ? 1 : 0;
