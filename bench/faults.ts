/**
 * Benchmark (not a test): a longer day of faults on the real stack (test/helpers/fault-day.ts),
 * every fault twice, and the table: accepted, success, failure by cause, lost, pushed twice, broken
 * tags, undelivered events, and each fault's recovery time (from its end to the first build answered
 * successfully after it).
 *
 *   npm run stack -- up
 *   npx tsx bench/faults.ts [rounds=N]
 */
import { dayTable, runFaultDay } from '../test/helpers/fault-day.js';

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
