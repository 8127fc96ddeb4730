/**
 * The stages of a build, from its admission to its answer, as one table the flow runs
 * (workers/flow/build-flow.ts): each row its number, its name, and the record's phase while it runs.
 * The service log's laps (`#5 clone: 80 ms`), the record's `stages` and ARCHITECTURE.md's list
 * are told from it (a test checks ARCHITECTURE.md against it both ways). Pure data.
 */
import type { BuildPhase } from '../../src/builds/types.js';

/** One stage: `phase` undefined when it keeps the record's phase (or the build has no record). */
export interface StageRow {
  readonly number: number;
  readonly name: string;
  readonly phase: BuildPhase | undefined;
}

const row = (number: number, name: string, phase: BuildPhase | undefined): StageRow => ({
  number,
  name,
  phase,
});

/** Every stage in the order a build meets them; a build skips those its path does not take. */
export const STAGES = {
  admit: row(1, 'admit', 'cloning'),
  followIdentical: row(2, 'follow an identical build', undefined),
  lookUpAnswered: row(3, 'look up the answered commits', 'cloning'),
  reuseAnswered: row(4, 'reuse the answered image', 'reusing'),
  clone: row(5, 'clone', 'cloning'),
  keyFromTrees: row(6, 'key from the trees', 'resolving'),
  decideFromTrees: row(7, 'decide from the trees', 'resolving'),
  checkOut: row(8, 'check out', 'resolving'),
  keyFromCheckout: row(9, 'key from the checkout', 'resolving'),
  decideFromCheckout: row(10, 'decide from the checkout', 'resolving'),
  waitForSameKey: row(11, 'wait for the same key', 'resolving'),
  buildAndPush: row(12, 'build and push', 'building'),
  recordImage: row(13, 'record the image', 'building'),
  rememberAnswer: row(14, 'remember the answer', undefined),
  answer: row(15, 'answer', 'finished'),
} as const satisfies Record<string, StageRow>;

/** The rows in their order. */
export const STAGE_ROWS: readonly StageRow[] = Object.values(STAGES);
