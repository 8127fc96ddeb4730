/**
 * A day of faults on the real stack, shared by test/integration/fault-day.test.ts (a short day,
 * asserting the zeros) and bench/faults.ts (a longer one, printing the table). Three replicas on a
 * Redis of their own (append-only, so a restart keeps its data), two builders behind private
 * bridges, a registry front the day controls and a webhook receiver. A stream of async and sync
 * builds, reuses and real builds runs while one fault after another strikes: a replica SIGKILLed
 * with builds running and queued, Redis restarted, a builder stopped, the registry answering 503,
 * client connections cut mid-poll. Then every build is accounted for. IBS_FAULT_DAY_LOGS=<dir>:
 * each replica's output is written there at the end (one file per process, the killed one's too).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countDay } from './fault-day-count.js';
import { strikeFaults } from './fault-day-faults.js';
import { newScene, releaseStage, setStage } from './fault-day-stage.js';
import { DayTraffic } from './fault-day-traffic.js';
import type { DayOptions, DayReport } from './fault-day-types.js';

export { causeOf } from './fault-day-count.js';
export type { DayOptions, DayReport } from './fault-day-types.js';

/** The stage set, the first build, requests streaming through every fault, then the count. */
export async function runFaultDay(options: DayOptions): Promise<DayReport> {
  const scene = newScene(mkdtempSync(join(tmpdir(), 'ibs-fault-day-')));
  try {
    const stage = await setStage(options, scene);
    const traffic = new DayTraffic(stage, options);
    await traffic.firstBuild();
    const stream = traffic.stream();
    const struck = await strikeFaults(stage, traffic, options);
    await stream.stop();
    options.log(`${traffic.sent.length} requests sent; waiting for their answers`);
    await Promise.all(traffic.inFlight);
    await traffic.findRecords();
    return await countDay(stage, traffic, struck);
  } finally {
    await releaseStage(scene);
  }
}

/** The table the bench prints (and the test logs). */
export function dayTable(report: DayReport): string {
  const rows: [string, string][] = [
    ['requests sent', String(report.sent.length)],
    ['refused (not accepted)', JSON.stringify(report.refused)],
    ['accepted', String(report.accepted)],
    ['answered success', String(report.success)],
    ...Object.entries(report.failures).map(([cause, n]): [string, string] => [
      `failure: ${cause}`,
      String(n),
    ]),
    ['lost', String(report.lost.length)],
    ['pushed twice', String(report.pushedTwice.length)],
    ['broken tags', String(report.brokenTags.length)],
    ['undelivered events', String(report.undelivered.length)],
    ['ibs builds not ending 0', String(report.ibsNotZero.length)],
    ['sync answers the record contradicts', String(report.contradicted.length)],
    ...report.faults.map((f): [string, string] => [
      `recovery after ${f.fault}`,
      f.recoveryMs === undefined ? 'no success after it' : `${(f.recoveryMs / 1000).toFixed(1)} s`,
    ]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
