/**
 * The stages of a build told one way: ARCHITECTURE.md's list of stages is STAGES
 * (workers/stages/table.ts) both ways, and one stage started by `stage` is one service-log line
 * `#n name: ms`, one entry of the record's `stages` with the same number and name, and the record's
 * phase set from its row only when it changes.
 */
import test from 'ava';
import type { BuildDetails, BuildReporter, RunningPhase } from '../../../../src/builds/types.js';
import { BuildLaps } from '../../../../workers/stages/laps.js';
import { stage } from '../../../../workers/stages/stage.js';
import { STAGES, STAGE_ROWS } from '../../../../workers/stages/table.js';
import { architectureStages } from '../../../helpers/architecture-stages.js';

test('ARCHITECTURE.md lists the stages of STAGES, each with its number and name, in order, and no other', (t) => {
  const listed = architectureStages();
  t.deepEqual(
    listed,
    STAGE_ROWS.map((row) => `${row.number} ${row.name}`),
  );
});

test('the rows are numbered 1 to n in order, each name once', (t) => {
  t.deepEqual(
    STAGE_ROWS.map((row) => row.number),
    STAGE_ROWS.map((_, i) => i + 1),
  );
  t.is(new Set(STAGE_ROWS.map((row) => row.name)).size, STAGE_ROWS.length);
});

/** A reporter that keeps what it is told. */
function keptReporter() {
  const phases: RunningPhase[] = [];
  let details: BuildDetails = {};
  const reporter: BuildReporter = {
    phase: async (phase) => void phases.push(phase),
    logOpened: async () => undefined,
    resolved: async () => undefined,
    details: async (more) => void (details = { ...details, ...more }),
    builder: async () => undefined,
  };
  return { reporter, phases, details: () => details };
}

test("a stage is one log line, one entry of the record's stages and its row's phase, from the same row", async (t) => {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const laps = new BuildLaps({
    info: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }),
  } as never);
  const job = { laps };
  // Before the record exists: logged, then listed once the record is made.
  await stage(job, STAGES.admit, async () => undefined);
  const kept = keptReporter();
  laps.recorded(kept.reporter, 'cloning');
  const value = await stage(job, STAGES.clone, async () => 'cloned');
  await stage(job, STAGES.keyFromTrees, async () => undefined);
  await stage(job, STAGES.decideFromTrees, async () => undefined);
  await t.throwsAsync(stage(job, STAGES.buildAndPush, () => Promise.reject(new Error('failed'))));
  t.is(value, 'cloned');
  const rows = [STAGES.admit, STAGES.clone, STAGES.keyFromTrees, STAGES.decideFromTrees];
  t.deepEqual(
    lines.map((line) => line.msg.replace(/\d+ ms$/, 'N ms')),
    rows.map((row) => `#${row.number} ${row.name}: N ms`),
  );
  t.deepEqual(
    lines.map((line) => [line.obj.stageNumber, line.obj.stage]),
    rows.map((row) => [row.number, row.name]),
  );
  t.deepEqual(
    kept.details().stages?.map((lap) => [lap.number, lap.name]),
    rows.map((row) => [row.number, row.name]),
  );
  // cloning was the record's phase when made; resolving set once; building when that stage began.
  t.deepEqual(kept.phases, ['resolving', 'building']);
  t.regex(laps.line(), /^# stages: #1 admit \d+\.\d{3} s, #5 clone \d+\.\d{3} s, .* \(job \d+\.\d{3} s\)\n$/);
  laps.jobStarted();
  t.regex(laps.line(), /^# stages: none \(job \d+\.\d{3} s\)\n$/);
});
